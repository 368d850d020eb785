// `radixchat-cli serve`: the engine behind a local OpenAI-compatible HTTP
// server (app/server/server.h lists the routes). Prints one line with the
// URL on stdout once it is listening (scripts and tests read it, e.g. with
// --port 0 for any free port) and stops gracefully on SIGINT or SIGTERM; a
// second signal during the grace period ends the process at once.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>

#include "access.h"
#include "commands.h"
#include "document-options.h"
#include "engine-options.h"
#include "kv-security.h"
#include "serve-documents.h"
#include "serve-recording.h"
#include "server.h"

namespace rc::cli {

namespace {

struct ServeOptions {
  EngineOptions engine;
  server::ServerOptions server;
  int parallel = 0;
  double shutdown_grace_s = 5.0;
  std::string record;  // serve-recording.h
  int record_max_mb = 1024;
  bool record_redact = false;
  bool kv_events_allow_remote = false;
  bool api_key_given = false;          // --api-key or $RADIXCHAT_API_KEY, even blank
  std::string kv_events_curve_secret;  // the key file (kv-security.h)
  std::string library;                 // --library: documents chat requests may name
};

// SIGINT/SIGTERM reach whichever thread the kernel picks, including
// threads libraries start before main() (OpenBLAS), so masks cannot route
// them; the handler only writes the signal number to a pipe that the
// waiter thread reads. A second signal exits at once.
int g_signal_pipe[2] = {-1, -1};
volatile sig_atomic_t g_signals = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_signals) _exit(128 + sig);
  g_signals = 1;
  const unsigned char b = static_cast<unsigned char>(sig);
  ssize_t ignored = write(g_signal_pipe[1], &b, 1);
  (void)ignored;
}

bool install_stop_handlers() {
  if (pipe2(g_signal_pipe, O_CLOEXEC) != 0) return false;
  struct sigaction sa = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  return sigaction(SIGINT, &sa, nullptr) == 0 && sigaction(SIGTERM, &sa, nullptr) == 0;
}

// KV events stay on the machine unless asked (kv-security.h): a remote
// endpoint needs --kv-events-allow-remote or a CURVE key, read here.
Status check_kv_events_access(ServeOptions& o) {
  const bool curve = !o.kv_events_curve_secret.empty();
  const bool remote = o.kv_events_allow_remote;
  if (Status s = kv_events::check_publish_endpoint("--kv-events", o.server.kv_events_endpoint,
                                                   remote, curve);
      !s.ok())
    return s;
  if (Status s = kv_events::check_publish_endpoint("--kv-events-replay", o.server.kv_events_replay,
                                                   remote, curve);
      !s.ok())
    return s;
  if (!curve) return {};
  auto keys = kv_events::read_curve_secret_file(o.kv_events_curve_secret);
  if (!keys.ok())
    return Status(keys.status().code(), "--kv-events-curve-secret: " + keys.status().message());
  o.server.kv_events_curve_secret = keys->secret_key;
  return {};
}

int run_serve(ServeOptions& o) {
  // A blank key would leave the server open while the user believes it
  // guarded; refuse it before spending seconds loading the model.
  if (o.api_key_given && o.server.api_key.find_first_not_of(" \t\r\n") == std::string::npos) {
    return fail("--api-key is blank: give a key clients can send, or leave it out");
  }
  for (const std::string& origin : o.server.allowed_origins) {
    if (Status st = server::check_origin(origin); !st.ok()) return fail(st.message());
  }
  // Refuse a bad bind before spending seconds loading the model.
  if (Status st = server::check_bind_address(o.server.host, o.server.api_key); !st.ok()) {
    return fail(st.message());
  }
  if (Status st = check_kv_events_access(o); !st.ok()) return fail(st.message());
  if (o.parallel > 0) o.engine.config.max_running = o.parallel;
  o.server.shutdown_grace =
      std::chrono::milliseconds(static_cast<int64_t>(o.shutdown_grace_s * 1000));
  o.server.version = RADIXCHAT_VERSION;

  if (!install_stop_handlers()) return fail("cannot install the SIGINT/SIGTERM handlers");

  std::shared_ptr<LibraryDocumentSource> library;
  if (!o.library.empty()) {
    auto lib = open_library(o.library);
    if (!lib) return 1;
    library = std::make_shared<LibraryDocumentSource>(std::move(lib));
    o.server.documents = library;
  }
  std::unique_ptr<Engine> engine = open_engine(o.engine.config);
  if (!engine) return 1;
  if (library) {
    if (Status st = library->warm_kept(*engine); !st.ok())
      std::fprintf(stderr, "radixchat-cli: documents kept warm not warmed: %s\n",
                   st.message().c_str());
  }
  std::unique_ptr<ServeRecording> recording;
  if (!o.record.empty()) {
    auto r = ServeRecording::create(o.record, o.record_max_mb, o.record_redact, *engine);
    if (!r.ok()) return fail(r.status());
    recording = std::move(r.value());
    o.server.request_observer = recording->observer();
  }
  Result<std::unique_ptr<server::Server>> created = server::Server::create(*engine, o.server);
  if (!created.ok()) return fail(created.status());
  server::Server& srv = *created.value();
  if (recording) {
    if (Status st = recording->attach(srv); !st.ok()) return fail(st);
    std::fprintf(stderr, "radixchat-cli: recording the cache to %s\n", o.record.c_str());
  }

  const ModelInfo& m = engine->model_info();
  const std::string host =
      o.server.host.find(':') != std::string::npos ? "[" + o.server.host + "]" : o.server.host;
  // The device names the backend ("CPU (2 threads)" or the GPU's name).
  std::fprintf(stderr, "radixchat-cli: serving %s on %s (cache %s, context %d tokens)%s\n",
               m.name.c_str(), m.device.c_str(), m.cache.c_str(), m.context_length,
               o.server.api_key.empty() ? "" : ", API key required");
  for (const TierInfo& t : engine->stats().tiers.tiers) {
    std::fprintf(stderr, "radixchat-cli: cache tier %s: %s (%s%s%s)\n", t.name.c_str(),
                 t.where.c_str(), t.state.c_str(), t.error.empty() ? "" : ": ", t.error.c_str());
  }
  if (!srv.kv_events_endpoint().empty()) {
    std::fprintf(stderr, "radixchat-cli: publishing KV events on %s%s%s (topic '%s')\n",
                 srv.kv_events_endpoint().c_str(),
                 srv.kv_events_replay().empty() ? "" : ", replay on ",
                 srv.kv_events_replay().c_str(), o.server.kv_events_topic.c_str());
  }
  std::printf("listening on http://%s:%d/v1\n", host.c_str(), srv.port());
  std::fflush(stdout);

  // Waits for a signal (a byte on the pipe) or for serving to end (-1).
  std::thread waiter([&] {
    int sig = 0;
    for (;;) {
      unsigned char b = 0;
      const ssize_t n = read(g_signal_pipe[0], &b, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n == 1 && b != 0xff) sig = b;
      break;
    }
    if (sig == 0) return;
    std::fprintf(stderr,
                 "radixchat-cli: %s: finishing requests in flight (up to %.0f s), signal again "
                 "to quit now\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM", o.shutdown_grace_s);
    srv.shutdown();
  });

  Status st = srv.run();
  const unsigned char wake = 0xff;  // serving ended without a signal
  ssize_t ignored = write(g_signal_pipe[1], &wake, 1);
  (void)ignored;
  waiter.join();
  Status rec_st = recording ? recording->stop() : Status();
  created.value().reset();
  engine.reset();
  if (!st.ok()) return fail(st);
  if (!rec_st.ok()) return fail(rec_st);
  std::fprintf(stderr, "radixchat-cli: server stopped\n");
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& root) {
  auto o = std::make_shared<ServeOptions>();
  auto* app = root.add_subcommand("serve", "Local OpenAI-compatible HTTP server");
  o->engine.add_to(*app);
  server::ServerOptions& s = o->server;
  app->add_option("--host", s.host,
                  "address to listen on (default 127.0.0.1; any other needs --api-key)");
  app->add_option("--port", s.port, "TCP port (default 8080; 0 = any free port)")
      ->check(CLI::Range(0, 65535));
  CLI::Option* key = app->add_option("--api-key", s.api_key,
                                     "require 'Authorization: Bearer KEY' on every request (or "
                                     "$RADIXCHAT_API_KEY); a blank key is refused")
                         ->envname("RADIXCHAT_API_KEY");
  key->each([o](const std::string&) { o->api_key_given = true; });
  app->add_option("--allow-origin", s.allowed_origins,
                  "let web pages from this origin (https://app.example[:port]) call the API; "
                  "repeatable. Requests from any other Origin get 403")
      ->take_all()
      ->allow_extra_args(false);
  app->add_option("--parallel", o->parallel,
                  "requests decoding at once (default: the engine's, 16)")
      ->check(CLI::Range(1, 256));
  app->add_option("--context-overflow", s.context_overflow,
                  "chats longer than the context: rolling-window (default; keep the system "
                  "prompt and the latest turns), truncate-middle or stop (400)")
      ->check(CLI::IsMember({"rolling-window", "truncate-middle", "stop"}));
  app->add_option("--max-body-bytes", s.max_body_bytes, "largest request body (default 1 MiB)")
      ->check(CLI::Range(size_t(1024), size_t(1) << 30));
  app->add_option("--http-threads", s.http_threads,
                  "requests answered at once; each stream holds one (default 64)")
      ->check(CLI::Range(4, 4096));
  app->add_option("--max-client-connections", s.max_client_connections,
                  "requests one client address may have answered at once; more get 503 with "
                  "Retry-After (default: half of --http-threads)")
      ->check(CLI::Range(1, 4096));
  app->add_option("--max-viewers", s.max_event_subscribers,
                  "clients of /v1/cache/events at once (default 16)")
      ->check(CLI::Range(1, 1024));
  app->add_option("--library", o->library,
                  "serve this document library: GET /v1/documents, and chat requests may name "
                  "its documents in \"documents\" (default: none)");
  app->add_option("--record", o->record,
                  "write a recording of the cache events, snapshots and requests (SQLite)");
  app->add_option("--record-max-mb", o->record_max_mb, "stop recording at this file size")
      ->check(CLI::PositiveNumber);
  app->add_flag("--redact", o->record_redact,
                "record token ids as salted hashes and no text (shape, lengths, hits and "
                "timings kept), for bug reports")
      ->needs("--record");
  app->add_option("--shutdown-grace", o->shutdown_grace_s,
                  "seconds requests in flight get to finish on SIGINT/SIGTERM (default 5)")
      ->check(CLI::Range(0.0, 3600.0));
  app->add_option("--kv-events", s.kv_events_endpoint,
                  "publish the cache as vLLM-format KV events on this ZeroMQ endpoint, e.g. "
                  "tcp://127.0.0.1:5557 (a remote one needs --kv-events-allow-remote or "
                  "--kv-events-curve-secret)");
  app->add_option("--kv-events-replay", s.kv_events_replay,
                  "ZeroMQ ROUTER endpoint answering replay requests for lost KV events")
      ->needs("--kv-events");
  app->add_option("--kv-events-topic", s.kv_events_topic,
                  "topic frame of every KV-events message (default kv-events)")
      ->needs("--kv-events");
  app->add_flag("--kv-events-allow-remote", o->kv_events_allow_remote,
                "allow a --kv-events endpoint other machines can reach, in the clear (the "
                "events carry every prompt's token ids)")
      ->needs("--kv-events");
  app->add_option("--kv-events-curve-secret", o->kv_events_curve_secret,
                  "encrypt KV events with ZeroMQ CURVE: this key file's secret key (make one "
                  "with kv-events-keygen); subscribers need its .pub")
      ->needs("--kv-events");
  return {app, [o] { return run_serve(*o); }};
}

}  // namespace rc::cli
