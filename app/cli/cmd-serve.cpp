// `radixchat-cli serve`: the engine behind a local OpenAI-compatible HTTP
// server (app/server/server.h lists the routes). Prints one line with the
// URL on stdout once it is listening (scripts and tests read it, e.g. with
// --port 0 for any free port) and stops gracefully on SIGINT or SIGTERM; a
// second signal during the grace period ends the process at once.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <thread>

#include "access.h"
#include "commands.h"
#include "engine-options.h"
#include "server.h"

namespace rc::cli {

namespace {

struct ServeOptions {
  EngineOptions engine;
  server::ServerOptions server;
  int parallel = 0;
  double shutdown_grace_s = 5.0;
};

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

int run_serve(ServeOptions& o) {
  // Refuse a bad bind before spending seconds loading the model.
  if (Status st = server::check_bind_address(o.server.host, o.server.api_key); !st.ok()) {
    return fail(st.message());
  }
  if (o.parallel > 0) o.engine.config.max_running = o.parallel;
  o.server.shutdown_grace = std::chrono::milliseconds(static_cast<int64_t>(o.shutdown_grace_s * 1000));
  o.server.version = RADIXCHAT_VERSION;

  // Every thread created from here on (engine, HTTP workers) inherits the
  // mask, so SIGINT/SIGTERM reach only the waiter below, via sigtimedwait.
  const sigset_t signals = stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::unique_ptr<Engine> engine = open_engine(o.engine.config);
  if (!engine) return 1;
  Result<std::unique_ptr<server::Server>> created = server::Server::create(*engine, o.server);
  if (!created.ok()) return fail(created.status());
  server::Server& srv = *created.value();

  const ModelInfo& m = engine->model_info();
  const std::string host =
      o.server.host.find(':') != std::string::npos ? "[" + o.server.host + "]" : o.server.host;
  std::fprintf(stderr, "radixchat-cli: serving %s (%s on %s, cache %s, context %d)%s\n",
               m.name.c_str(), m.backend.c_str(), m.device.c_str(), m.cache.c_str(),
               m.context_length, o.server.api_key.empty() ? "" : ", API key required");
  std::printf("listening on http://%s:%d/v1\n", host.c_str(), srv.port());
  std::fflush(stdout);

  std::atomic<bool> serving_done{false};
  std::thread waiter([&] {
    const timespec tick{0, 200 * 1000 * 1000};
    while (!serving_done) {
      siginfo_t info;
      if (sigtimedwait(&signals, &info, &tick) < 0) continue;  // timeout or EINTR
      std::fprintf(stderr, "radixchat-cli: %s: finishing requests in flight (up to %.0f s), "
                   "signal again to quit now\n",
                   info.si_signo == SIGINT ? "SIGINT" : "SIGTERM", o.shutdown_grace_s);
      // A second signal takes the default action (terminate) on this thread.
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
      srv.shutdown();
      return;
    }
  });

  Status st = srv.run();
  serving_done = true;
  waiter.join();
  created.value().reset();
  engine.reset();
  if (!st.ok()) return fail(st);
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
  app->add_option("--api-key", s.api_key,
                  "require 'Authorization: Bearer KEY' on every request (or $RADIXCHAT_API_KEY)")
      ->envname("RADIXCHAT_API_KEY");
  app->add_option("--parallel", o->parallel,
                  "requests decoding at once (default: the engine's, 16)")
      ->check(CLI::Range(1, 256));
  app->add_option("--max-body-bytes", s.max_body_bytes, "largest request body (default 1 MiB)")
      ->check(CLI::Range(size_t(1024), size_t(1) << 30));
  app->add_option("--http-threads", s.http_threads,
                  "connections served at once; each stream holds one (default 64)")
      ->check(CLI::Range(4, 4096));
  app->add_option("--max-viewers", s.max_event_subscribers,
                  "clients of /v1/cache/events at once (default 16)")
      ->check(CLI::Range(1, 1024));
  app->add_option("--shutdown-grace", o->shutdown_grace_s,
                  "seconds requests in flight get to finish on SIGINT/SIGTERM (default 5)")
      ->check(CLI::Range(0.0, 3600.0));
  return {app, [o] { return run_serve(*o); }};
}

}  // namespace rc::cli
