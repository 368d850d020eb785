// `radixchat-cli cache-watch`: subscribe to a vLLM/SGLang/Dynamo-format KV
// event stream without a window, and on exit (after --seconds, or SIGINT)
// print the remote cache's block tree as text or as one JSON object
// (design.md section 7). --url (a RadixChat server) and --model (a
// vocabulary for token text) are not implemented yet and say so.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "kv-subscriber.h"

namespace rc::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_sigint(int) { g_stop = 1; }

nlohmann::json stats_json(const kv_events::Subscriber& sub) {
  const kv_events::TreeStats t = sub.tree().stats();
  const kv_events::SubscriberStats s = sub.stats();
  return {{"blocks", t.blocks},
          {"stored_events", t.stored_events},
          {"removed_events", t.removed_events},
          {"cleared_events", t.cleared_events},
          {"unknown_events", t.unknown_events},
          {"removed_unknown_blocks", t.removed_unknown_blocks},
          {"roots", t.roots},
          {"max_depth_blocks", t.max_depth_blocks},
          {"messages", s.messages},
          {"replayed_messages", s.replayed_messages},
          {"malformed_messages", s.malformed_messages},
          {"dropped_messages", s.dropped_messages},
          {"seq_gaps", s.seq_gaps},
          {"publisher_restarts", s.publisher_restarts},
          {"last_error", s.last_error}};
}

}  // namespace

Command add_cache_watch_command(CLI::App& root) {
  struct Opts {
    std::vector<std::string> pubs, replays;
    std::string topic, url, model;
    double seconds = 0;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* app = root.add_subcommand("cache-watch",
                                  "Watch a vLLM/SGLang KV-events stream and print its block tree");
  app->add_option("--kv-events", o->pubs,
                  "ZeroMQ PUB endpoint (repeat: one per data-parallel rank)");
  app->add_option("--replay", o->replays,
                  "replay ROUTER endpoint, paired in order with --kv-events");
  app->add_option("--kv-events-topic", o->topic, "topic prefix to subscribe to (default: all)");
  app->add_option("--seconds", o->seconds, "stop after N seconds (default: until SIGINT)")
      ->check(CLI::NonNegativeNumber);
  app->add_flag("--json", o->json, "print one JSON object of counts instead of the tree");
  app->add_option("--url", o->url, "a RadixChat server (not implemented yet)");
  app->add_option("--model", o->model, "a GGUF vocabulary for token text (not implemented yet)");
  return {
      app, [o] {
        if (!o->url.empty())
          return fail("cache-watch: --url is not implemented yet; use --kv-events");
        if (!o->model.empty()) return fail("cache-watch: --model is not implemented yet");
        if (o->pubs.empty()) return fail("cache-watch: --kv-events ENDPOINT is required");
        if (o->replays.size() > o->pubs.size())
          return fail("cache-watch: more --replay than --kv-events endpoints");
        std::vector<kv_events::Endpoint> eps;
        for (size_t i = 0; i < o->pubs.size(); ++i)
          eps.push_back({o->pubs[i], i < o->replays.size() ? o->replays[i] : std::string()});
        auto sub = kv_events::Subscriber::connect(eps, o->topic);
        if (!sub.ok()) return fail(sub.status());
        std::signal(SIGINT, on_sigint);
        std::signal(SIGTERM, on_sigint);
        const auto start = std::chrono::steady_clock::now();
        const auto limit = std::chrono::duration<double>(o->seconds);
        while (!g_stop && (o->seconds <= 0 || std::chrono::steady_clock::now() - start < limit))
          (*sub)->poll(50);
        if (o->json) {
          std::printf("%s\n", stats_json(**sub).dump().c_str());
          return 0;
        }
        const auto s = (*sub)->stats();
        const auto t = (*sub)->tree().stats();
        std::printf("%s", (*sub)->tree().to_text().c_str());
        std::printf(
            "blocks=%llu roots=%llu max_depth_blocks=%llu stored=%llu removed=%llu cleared=%llu "
            "messages=%llu malformed=%llu dropped=%llu seq_gaps=%llu\n",
            (unsigned long long)t.blocks, (unsigned long long)t.roots,
            (unsigned long long)t.max_depth_blocks, (unsigned long long)t.stored_events,
            (unsigned long long)t.removed_events, (unsigned long long)t.cleared_events,
            (unsigned long long)s.messages, (unsigned long long)s.malformed_messages,
            (unsigned long long)s.dropped_messages, (unsigned long long)s.seq_gaps);
        if (!s.last_error.empty()) std::printf("last error: %s\n", s.last_error.c_str());
        // Lost events leave blocks the publisher has since evicted, or miss
        // ones it stored: say so rather than show the tree as exact.
        if (s.dropped_messages > 0)
          std::printf(
              "warning: %llu messages lost and not replayed; the tree may differ from the "
              "server's\n",
              (unsigned long long)s.dropped_messages);
        return 0;
      }};
}

}  // namespace rc::cli
