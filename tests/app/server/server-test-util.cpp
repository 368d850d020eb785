#include "server-test-util.h"
#include "skip-or-fail.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>

namespace rc::server::testing {

Engine* shared_engine(std::string* why_missing) {
  static std::once_flag once;
  static std::unique_ptr<Engine> engine;
  static std::string error;
  static bool missing = false;
  std::call_once(once, [] {
    EngineConfig cfg;
    cfg.n_threads = 2;
    cfg.kv_pool_tokens = 16384;
    Result<std::unique_ptr<Engine>> e = Engine::create(cfg);
    if (e.ok()) {
      engine = std::move(e.value());
    } else {
      error = e.status().to_string();
      missing = e.status().code() == StatusCode::not_found;
    }
  });
  if (!engine) {
    // A missing model file skips; a model that fails to load fails.
    EXPECT_TRUE(missing) << error;
    if (why_missing) *why_missing = error;
  }
  return engine.get();
}

LiveServer::LiveServer(Engine& engine, ServerOptions options) {
  options.host = "127.0.0.1";
  options.port = 0;
  Result<std::unique_ptr<Server>> s = Server::create(engine, options);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return;
  server_ = std::move(s.value());
  port_ = server_->port();
  thread_ = std::thread([this] { EXPECT_TRUE(server_->run().ok()); });
  // Serving once /health answers.
  httplib::Client cli("127.0.0.1", port_);
  cli.set_connection_timeout(1);
  for (int i = 0; i < 200; ++i) {
    if (auto r = cli.Get("/health"); r && (r->status == 200 || r->status == 401)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

LiveServer::~LiveServer() { stop(); }

void LiveServer::stop() {
  if (!server_) return;
  server_->shutdown();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

httplib::Client LiveServer::client(const std::string& api_key) const {
  httplib::Client cli("127.0.0.1", port_);
  cli.set_read_timeout(60);
  cli.set_write_timeout(10);
  if (!api_key.empty()) cli.set_bearer_token_auth(api_key.c_str());
  return cli;
}

void LiveServerTest::SetUp() {
  std::string why;
  engine_ = shared_engine(&why);
  if (!engine_) RC_SKIP_OR_FAIL("model not available: " << why);
  ServerOptions o;
  o.heartbeat = std::chrono::milliseconds(200);
  o.shutdown_grace = std::chrono::milliseconds(2000);
  server_ = std::make_unique<LiveServer>(*engine_, o);
}

std::pair<int, nlohmann::json> LiveServerTest::post(const std::string& path,
                                                    const std::string& body) {
  httplib::Client cli = server_->client();
  if (read_timeout_s_ > 0) cli.set_read_timeout(read_timeout_s_, 0);
  auto r = cli.Post(path.c_str(), body, "application/json");
  EXPECT_TRUE(r) << httplib::to_string(r.error());
  if (!r) return {0, nlohmann::json()};
  return {r->status, nlohmann::json::parse(r->body, nullptr, false)};
}

std::vector<std::string> sse_data_lines(const std::string& body) {
  std::vector<std::string> out;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("data: ", 0) == 0) out.push_back(line.substr(6));
  }
  return out;
}

httplib::Result post_streaming(httplib::Client& cli, const std::string& path,
                               const nlohmann::json& body,
                               std::function<bool(const char*, size_t)> receive) {
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [receive](const char* data, size_t n, uint64_t, uint64_t) {
    return receive(data, n);
  };
  return cli.send(req);
}

double metric(const std::string& text, const std::string& line_prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(line_prefix + " ", 0) == 0)
      return std::stod(line.substr(line_prefix.size() + 1));
  }
  return -1;
}

}  // namespace rc::server::testing
