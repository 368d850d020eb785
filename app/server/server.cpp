// Routing, access control and lifecycle of the HTTP server. The route
// bodies live in completion-routes.cpp and cache-routes.cpp.
#include "server.h"

#include <httplib.h>
#include <malloc.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "access.h"
#include "cache-routes.h"
#include "completion-routes.h"
#include "document-routes.h"
#include "http-listener.h"
#include "http-util.h"
#include "json-depth.h"
#include "kv-publish.h"
#include "metrics-text.h"

namespace rc::server {

bool ServerContext::serves_model(const std::string& name) const {
  const ModelInfo& m = engine.model_info();
  return name == m.name || name == std::filesystem::path(m.path).stem().string() ||
         name == std::filesystem::path(m.path).filename().string();
}

std::string ServerContext::fingerprint() const {
  return "radixchat-" + options.version + "-" + engine.model_info().backend + "-" +
         engine.model_info().cache;
}

namespace {

// The routes, for 405 answers and for /metrics labels (unknown paths are
// counted as "other" so a scanner cannot grow the label set).
struct RouteInfo {
  const char* path;
  const char* method;
};
constexpr RouteInfo kRoutes[] = {
    {"/v1/chat/completions", "POST"},
    {"/v1/completions", "POST"},
    {"/v1/models", "GET"},
    {"/metrics", "GET"},
    {"/v1/cache", "GET"},
    {"/v1/cache/events", "GET"},
    {"/health", "GET"},
};

std::string route_label(const std::string& path) {
  for (const RouteInfo& r : kRoutes) {
    if (path == r.path) return r.path;
  }
  if (path.rfind("/v1/models/", 0) == 0) return "/v1/models/{id}";
  return "other";
}

// Connections the kernel queues for accept(). Debian's cpp-httplib is a
// compiled library, so CPPHTTPLIB_LISTEN_BACKLOG (5 there) cannot be
// changed from here; listen() on the bound socket again sets the backlog.
constexpr int kListenBacklog = 512;
// Workers that only answer 503 to connections beyond the pool; a 503 is
// quick, so a few keep up with many rejected clients.
constexpr int kOverflowWorkers = 8;
// A body at least this large, or one refused as hostile, is followed by
// malloc_trim: glibc keeps freed heap for reuse, so the resident size
// would otherwise stay at its peak after a burst of large requests.
constexpr size_t kTrimAfterBytes = 64 * 1024;

ListenerOptions listener_options(const ServerOptions& o) {
  ListenerOptions l;
  const int threads = std::max(o.http_threads, 4);
  l.queue.workers = threads;
  l.queue.max_waiting = std::max(threads / 4, 1);
  l.queue.overflow_workers = kOverflowWorkers;
  l.queue.reception.head_timeout = o.head_timeout;
  l.queue.reception.max_per_client =
      o.max_client_connections > 0 ? o.max_client_connections : std::max(threads / 2, 1);
  l.read_timeout = o.read_timeout;
  return l;
}

bool origin_allowed(const std::string& origin, const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (a == origin) return true;
  }
  return false;
}

// Why `host:port` cannot be bound, in the kernel's words ("Address already
// in use"): a plain bind like the server's, made only to read errno.
std::string bind_failure(const std::string& host, int port) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return gai_strerror(rc);
  }
  std::string why = "cannot bind";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    const bool bound = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    why = bound ? "it was busy and has just been released; try again" : std::strerror(errno);
    close(fd);
    if (bound) break;
  }
  freeaddrinfo(found);
  return why;
}

const RouteInfo* find_route(const std::string& path) {
  for (const RouteInfo& r : kRoutes) {
    if (path == r.path) return &r;
  }
  return nullptr;
}

class HttpServer final : public Server {
 public:
  HttpServer(Engine& engine, ServerOptions options)
      : ctx_(engine, std::move(options)), svr_(listener_options(ctx_.options)) {
    ctx_.generations->set_observer(ctx_.options.request_observer);
  }

  ~HttpServer() override { shutdown(); }

  Status bind() {
    const ServerOptions& o = ctx_.options;
    // httplib's default options set SO_REUSEPORT, which lets a second
    // process of the same user bind this port and take half its traffic.
    // SO_REUSEADDR alone still refuses a port another socket listens on.
    svr_.set_socket_options([this](socket_t sock) {
      const int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_fd_ = sock;
    });
    svr_.set_payload_max_length(o.max_body_bytes);
    svr_.set_tcp_nodelay(true);  // a token is one small write; do not delay it
    svr_.set_keep_alive_timeout(5);
    routes();
    int port = o.port;
    if (port == 0) {
      port = svr_.bind_to_any_port(o.host);
      if (port < 0) {
        return Status(StatusCode::internal,
                      "cannot listen on " + o.host + ": " + bind_failure(o.host, 0));
      }
    } else if (!svr_.bind_to_port(o.host, port)) {
      return Status(StatusCode::invalid_argument,
                    "cannot listen on " + o.host + ":" + std::to_string(port) + ": " +
                        bind_failure(o.host, port) +
                        " (is another server running? try another --port)");
    }
    if (listen_fd_ >= 0) ::listen(listen_fd_, kListenBacklog);
    port_ = port;
    if (!o.kv_events_endpoint.empty()) {
      kv_events::PublisherOptions po;
      po.endpoint = o.kv_events_endpoint;
      po.replay_endpoint = o.kv_events_replay;
      po.topic = o.kv_events_topic;
      po.curve_secret_key = o.kv_events_curve_secret;
      auto pub = KvEventsPublisher::start(ctx_.engine, ctx_.hub, po);
      if (!pub.ok()) return pub.status();
      kv_pub_ = std::move(pub.value());
    }
    return Status();
  }

  int port() const override { return port_; }
  std::string kv_events_endpoint() const override {
    return kv_pub_ ? kv_pub_->endpoint() : std::string();
  }
  std::string kv_events_replay() const override {
    return kv_pub_ ? kv_pub_->replay_endpoint() : std::string();
  }
  std::shared_ptr<EventSubscription> subscribe_events() override { return ctx_.hub.subscribe(); }

  Status run() override {
    run_entered_ = true;
    Status st;
    if (!stopping_ && !svr_.listen_after_bind() && !stopping_) {
      st = Status(StatusCode::internal, "the listening socket failed");
    }
    run_returned_ = true;
    return st;
  }

  void shutdown() override {
    std::lock_guard<std::mutex> lock(shutdown_mu_);
    if (stopped_) return;
    stopping_ = true;
    ctx_.draining = true;
    ctx_.hub.close();
    const auto grace = std::chrono::steady_clock::now() + ctx_.options.shutdown_grace;
    if (!ctx_.generations->wait_idle(grace)) {
      // Cancelled requests end their streams with an error and [DONE].
      for (int i = 0; i < 50 && !ctx_.generations->wait_idle(std::chrono::steady_clock::now() +
                                                             std::chrono::milliseconds(100));
           ++i) {
        ctx_.generations->cancel_all(ctx_.engine);
      }
    }
    // Let streams that just ended write their last bytes before the
    // listener goes away (httplib stops calling providers after stop()).
    for (int i = 0; i < 100 && ctx_.streams_open > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop_listener();
    stopped_ = true;
  }

 private:
  // httplib's stop() only acts once listen has started; run() may be about
  // to start, so wait for either.
  void stop_listener() {
    for (;;) {
      if (svr_.is_running()) {
        svr_.stop();
        return;
      }
      if (!run_entered_ || run_returned_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // A browser sends Origin with every cross-site request, including the
  // text/plain POSTs a page may send without a preflight, so refusing
  // unknown origins keeps web pages from driving the API (docs/server.md).
  std::optional<ApiError> refuse_origin(const httplib::Request& req) const {
    if (!req.has_header("Origin")) return std::nullopt;
    const std::string origin = req.get_header_value("Origin");
    if (origin_allowed(origin, ctx_.options.allowed_origins)) return std::nullopt;
    ApiError e;
    e.http_status = 403;
    e.code = "origin_not_allowed";
    e.message = "Origin '" + origin.substr(0, 200) +
                "' is not allowed to use this server. Start it with --allow-origin " +
                (origin.empty() ? std::string("ORIGIN") : origin.substr(0, 200)) +
                " to let pages from that origin call it.";
    return e;
  }

  std::optional<ApiError> refuse_host(const httplib::Request& req) const {
    const ServerOptions& o = ctx_.options;
    if (!o.api_key.empty() || host_header_allowed(req.get_header_value("Host"), o.host)) {
      return std::nullopt;
    }
    ApiError e;
    e.http_status = 403;
    e.message = "Host '" + req.get_header_value("Host") +
                "' is not this server's address. Without --api-key only loopback host names "
                "are accepted (this blocks DNS-rebinding attacks from web pages).";
    e.code = "forbidden_host";
    return e;
  }

  std::optional<ApiError> refuse(const httplib::Request& req) const {
    if (auto e = refuse_origin(req)) return e;
    if (!bearer_authorized(req.get_header_value("Authorization"), ctx_.options.api_key)) {
      return invalid_api_key();
    }
    return refuse_host(req);
  }

  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  using BodyHandler = std::function<void(const std::string& body, httplib::Response&)>;

  // A connection the workers could not take (connection-queue.h): 503,
  // with the request read in full first so closing the socket sends no
  // reset over the answer.
  static bool answer_overload(httplib::Response& res) {
    if (!ConnectionQueue::serving_overflow()) return false;
    write_error(res, unavailable("The server is busy: every connection slot is taken. Retry "
                                 "after the number of seconds in Retry-After."));
    res.set_header("Retry-After", "1");
    return true;
  }

  void get(const char* pattern, Handler h) {
    svr_.Get(pattern, [this, h](const httplib::Request& req, httplib::Response& res) {
      if (answer_overload(res)) return;
      if (auto e = refuse(req)) return write_error(res, *e);
      h(req, res);
    });
  }

  // POST bodies are read here rather than by httplib, so a chunked body
  // obeys the same size limit as one with a Content-Length (httplib 0.11
  // enforces the limit only for the latter).
  void post(const char* pattern, BodyHandler h) {
    svr_.Post(pattern, [this, h](const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& reader) {
      const size_t limit = ctx_.options.max_body_bytes;
      std::string body;
      bool too_big = false;
      const bool ok = reader([&](const char* data, size_t n) {
        if (body.size() + n > limit) {
          too_big = true;
          return false;
        }
        body.append(data, n);
        return true;
      });
      if (too_big || res.status == 413) return write_error(res, body_too_large());
      if (!ok) return write_error(res, invalid_request("could not read the request body"));
      if (answer_overload(res)) return;
      if (auto e = refuse(req)) return write_error(res, *e);
      if (auto e = check_json_depth(body)) {
        body = std::string();
        malloc_trim(0);
        return write_error(res, *e);
      }
      res.status = -1;
      const size_t size = body.size();
      h(body, res);
      body = std::string();
      if (size >= kTrimAfterBytes) malloc_trim(0);
    });
  }

  // CORS for the origins --allow-origin names: the preflight a browser
  // sends before a request with a key or a JSON body, and the headers that
  // let the page read the answer.
  void cors_routes() {
    svr_.Options(".*", [this](const httplib::Request& req, httplib::Response& res) {
      // A preflight carries no credentials, so the key is not asked for.
      if (auto e = refuse_origin(req)) return write_error(res, *e);
      if (auto e = refuse_host(req)) return write_error(res, *e);
      res.status = 204;
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
      res.set_header("Access-Control-Max-Age", "600");
    });
  }

  void add_cors_headers(const httplib::Request& req, httplib::Response& res) const {
    if (!req.has_header("Origin")) return;
    res.set_header("Vary", "Origin");
    const std::string origin = req.get_header_value("Origin");
    if (!origin_allowed(origin, ctx_.options.allowed_origins)) return;
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Access-Control-Expose-Headers",
                   "Retry-After, X-RadixChat-Dropped-Messages, X-RadixChat-Context-Cut");
  }

  ApiError body_too_large() const {
    ApiError e = invalid_request("The request body is larger than this server accepts (" +
                                     std::to_string(ctx_.options.max_body_bytes) + " bytes).",
                                 {}, "request_too_large");
    e.http_status = 413;
    return e;
  }

  void routes() {
    post("/v1/chat/completions", [this](const std::string& body, httplib::Response& res) {
      handle_completion(ctx_, Endpoint::chat, body, res);
    });
    post("/v1/completions", [this](const std::string& body, httplib::Response& res) {
      handle_completion(ctx_, Endpoint::completions, body, res);
    });
    get("/v1/models",
        [this](const httplib::Request&, httplib::Response& res) { handle_models(ctx_, res); });
    get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      handle_model(ctx_, req.matches[1], res);
    });
    get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(render_metrics(metrics_input()), kMetricsContentType);
    });
    get("/v1/cache", [this](const httplib::Request& req, httplib::Response& res) {
      handle_cache_snapshot(ctx_, req, res);
    });
    get("/v1/cache/events", [this](const httplib::Request&, httplib::Response& res) {
      handle_cache_events(ctx_, res);
    });
    get("/v1/documents",
        [this](const httplib::Request&, httplib::Response& res) { handle_documents(ctx_, res); });
    get("/health", [](const httplib::Request&, httplib::Response& res) {
      write_json(res, {{"status", "ok"}});
    });

    // Unknown routes, wrong methods, oversize or unreadable requests that
    // never reached a handler: give them OpenAI-style bodies too.
    svr_.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty() || res.content_provider_)
            return httplib::Server::HandlerResponse::Unhandled;
          if (auto e = refuse(req)) {
            write_error(res, *e);
            return httplib::Server::HandlerResponse::Handled;
          }
          ApiError e;
          if (res.status == 404) {
            e = invalid_request("Unknown request URL: " + req.method + " " + req.path +
                                    ". See the routes in docs/server.md"
                                    " (e.g. POST /v1/chat/completions).",
                                {}, "unknown_url");
            e.http_status = 404;
            if (const RouteInfo* r = find_route(req.path)) {
              e.http_status = 405;
              e.code = "method_not_allowed";
              e.message = req.path + " accepts " + r->method + ", not " + req.method + ".";
              res.set_header("Allow", r->method);
            }
          } else if (res.status == 413) {
            e = body_too_large();
          } else {
            e = invalid_request("The request could not be processed (HTTP " +
                                std::to_string(res.status) + ").");
            e.http_status = res.status;
            if (res.status >= 500) e.type = "server_error";
          }
          write_error(res, e);
          return httplib::Server::HandlerResponse::Handled;
        }));
    // A last line of defence: no exception leaves a handler as a crash.
    svr_.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
          std::string what = "unknown error";
          try {
            std::rethrow_exception(ep);
          } catch (const std::exception& ex) {
            what = ex.what();
          } catch (...) {
          }
          ApiError e;
          e.http_status = 500;
          e.type = "server_error";
          e.message = "internal error: " + what;
          write_error(res, e);
        });
    // Under load, answer and close: the client reconnects (or gets 503)
    // instead of racing the idle timeout on a kept-alive connection.
    cors_routes();
    svr_.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      add_cors_headers(req, res);
      if (ConnectionQueue::serving_overflow() || ConnectionQueue::pool_busy()) {
        res.headers.erase("Keep-Alive");
        if (res.get_header_value("Connection") != "close") res.set_header("Connection", "close");
      }
    });
    svr_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      ctx_.http.count(route_label(req.path), res.status);
    });
  }

  MetricsInput metrics_input() {
    MetricsInput in;
    in.engine = ctx_.engine.stats();
    in.model = ctx_.engine.model_info();
    in.version = ctx_.options.version;
    in.http = ctx_.http.snapshot();
    in.generations = ctx_.generations->counts();
    in.events = ctx_.hub.stats();
    in.streams_open = ctx_.streams_open.load();
    in.resident_bytes = resident_memory_bytes();
    return in;
  }

  ServerContext ctx_;
  HttpListener svr_;
  int port_ = 0;
  socket_t listen_fd_ = -1;                    // set by the socket options while binding
  std::unique_ptr<KvEventsPublisher> kv_pub_;  // after ctx_: stops before the hub goes
  std::atomic<bool> run_entered_{false}, run_returned_{false}, stopping_{false};
  std::mutex shutdown_mu_;
  bool stopped_ = false;
};

}  // namespace

Result<std::unique_ptr<Server>> Server::create(Engine& engine, ServerOptions options) {
  Status st = check_bind_address(options.host, options.api_key);
  if (!st.ok()) return st;
  if (options.port < 0 || options.port > 65535) {
    return Status(StatusCode::invalid_argument, "--port must be 0..65535");
  }
  if (!options.api_key.empty() &&
      options.api_key.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status(StatusCode::invalid_argument,
                  "--api-key is blank: give a key clients can send, or leave it out");
  }
  for (const std::string& origin : options.allowed_origins) {
    if (Status os = check_origin(origin); !os.ok()) return os;
  }
  if (options.max_client_connections < 0) {
    return Status(StatusCode::invalid_argument, "--max-client-connections must be 1 or more");
  }
  if (options.max_body_bytes < 1024) {
    return Status(StatusCode::invalid_argument, "the body limit must be at least 1 KiB");
  }
  if (options.max_event_subscribers * 2 > options.http_threads) {
    return Status(StatusCode::invalid_argument,
                  "each cache viewer holds an HTTP thread: keep --max-viewers at most half of "
                  "--http-threads so generation requests always find one");
  }
  auto server = std::make_unique<HttpServer>(engine, std::move(options));
  st = server->bind();
  if (!st.ok()) return st;
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace rc::server
