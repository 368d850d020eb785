// `radixchat-cli cache-watch`: follow a remote cache without a window, and
// on exit (after --seconds, or SIGINT) print its block tree as text or as
// one JSON object (docs/architecture.md section 18). The cache is either a
// vLLM/SGLang/Dynamo-format KV-events publisher (--kv-events, ZeroMQ) or a
// RadixChat server (--url, its /v1/cache/events); both arrive as a
// kv_events::BlockFeed. --model names a vocabulary for token text.
// --record FILE writes what was watched as a recording (the mapping from
// blocks to cache events: recording/block-recording.h).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "kv-security.h"
#include "kv-subscriber.h"
#include "radixchat/vocabulary.h"
#include "recording/block-recording.h"
#include "server-cache-feed.h"

namespace rc::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_sigint(int) { g_stop = 1; }

struct WatchOptions {
  std::vector<std::string> pubs, replays;
  std::string topic, url, api_key, model, record;
  std::string curve_server_key;  // kv-security.h: a Z85 key or a file holding it
  int record_max_mb = 1024;
  bool redact = false;
  double seconds = 0;
  bool json = false;
};

nlohmann::json stats_json(const kv_events::BlockFeed& feed) {
  const kv_events::TreeStats t = feed.tree().stats();
  const kv_events::SubscriberStats s = feed.stats();
  return {{"blocks", t.blocks},
          {"stored_events", t.stored_events},
          {"removed_events", t.removed_events},
          {"cleared_events", t.cleared_events},
          {"unknown_events", t.unknown_events},
          {"removed_unknown_blocks", t.removed_unknown_blocks},
          {"roots", t.roots},
          {"max_depth_blocks", t.max_depth_blocks},
          {"unknown_parent_roots", t.unknown_parent_roots},
          {"unknown_parent_blocks", t.unknown_parent_blocks},
          {"history_messages", s.history_messages},
          {"history_unheld_messages", s.history_unheld_messages},
          {"resync_requests", s.resync_requests},
          {"resync_pending", s.resync_pending},
          {"messages", s.messages},
          {"replayed_messages", s.replayed_messages},
          {"malformed_messages", s.malformed_messages},
          {"dropped_messages", s.dropped_messages},
          {"seq_gaps", s.seq_gaps},
          {"publisher_restarts", s.publisher_restarts},
          {"resyncs", s.resyncs},
          {"connected", s.connected},
          {"last_error", s.last_error}};
}

Result<std::unique_ptr<kv_events::BlockFeed>> open_feed(const WatchOptions& o) {
  if (!o.url.empty() && !o.pubs.empty())
    return Status(StatusCode::invalid_argument, "give --kv-events or --url, not both");
  if (!o.url.empty()) {
    auto feed = kv_events::ServerCacheFeed::connect(o.url, o.api_key);
    if (!feed.ok()) return feed.status();
    return std::unique_ptr<kv_events::BlockFeed>(std::move(feed.value()));
  }
  if (o.pubs.empty())
    return Status(StatusCode::invalid_argument, "--kv-events ENDPOINT or --url URL is required");
  if (o.replays.size() > o.pubs.size())
    return Status(StatusCode::invalid_argument, "more --replay than --kv-events endpoints");
  std::string server_key;
  if (!o.curve_server_key.empty()) {
    auto k = kv_events::read_curve_public_key(o.curve_server_key);
    if (!k.ok())
      return Status(k.status().code(), "--kv-events-curve-server-key: " + k.status().message());
    server_key = k.value();
  }
  std::vector<kv_events::Endpoint> eps;
  for (size_t i = 0; i < o.pubs.size(); ++i)
    eps.push_back({o.pubs[i], i < o.replays.size() ? o.replays[i] : std::string(), server_key});
  auto sub = kv_events::Subscriber::connect(eps, o.topic);
  if (!sub.ok()) return sub.status();
  return std::unique_ptr<kv_events::BlockFeed>(std::move(sub.value()));
}

void print_text(const kv_events::BlockFeed& feed, const Vocabulary* vocab) {
  kv_events::BlockTree::TokenText text;
  if (vocab) text = [vocab](const std::vector<int64_t>& ids) { return vocab->text(ids); };
  const auto s = feed.stats();
  const auto t = feed.tree().stats();
  std::printf("%s", feed.tree().to_text(16, text).c_str());
  std::printf(
      "blocks=%llu roots=%llu max_depth_blocks=%llu stored=%llu removed=%llu cleared=%llu "
      "messages=%llu malformed=%llu dropped=%llu seq_gaps=%llu\n",
      (unsigned long long)t.blocks, (unsigned long long)t.roots,
      (unsigned long long)t.max_depth_blocks, (unsigned long long)t.stored_events,
      (unsigned long long)t.removed_events, (unsigned long long)t.cleared_events,
      (unsigned long long)s.messages, (unsigned long long)s.malformed_messages,
      (unsigned long long)s.dropped_messages, (unsigned long long)s.seq_gaps);
  if (!s.last_error.empty()) std::printf("last error: %s\n", s.last_error.c_str());
  std::printf("%s\n", kv_events::unknown_status(t, s).c_str());
}

struct WatchRecording {
  std::unique_ptr<recording::Recorder> recorder;
  std::unique_ptr<recording::BlockRecording> blocks;
};

// Set before the first poll(), so every applied batch is recorded.
Result<WatchRecording> start_recording(const WatchOptions& o, kv_events::BlockFeed& feed) {
  WatchRecording w;
  if (o.record.empty()) return w;
  recording::RecorderOptions ro;
  ro.source = "cache-watch";
  ro.redact = o.redact;
  ro.max_bytes = int64_t(o.record_max_mb) << 20;
  ro.on_stop = [](const std::string& why) {
    std::fprintf(stderr, "radixchat-cli: %s\n", why.c_str());
  };
  auto rec = recording::Recorder::create(o.record, ro);
  if (!rec.ok()) return rec.status();
  w.recorder = std::move(rec.value());
  std::string remote = o.url;
  for (const std::string& p : o.pubs) remote += (remote.empty() ? "" : " ") + p;
  w.recorder->set_meta("remote", remote);
  w.recorder->set_meta("remote_kind", o.url.empty() ? "kv-events" : "radixchat-server");
  w.blocks = std::make_unique<recording::BlockRecording>(*w.recorder);
  feed.set_batch_observer([b = w.blocks.get()](const kv_events::Batch& batch) { b->apply(batch); });
  return w;
}

int run_cache_watch(const WatchOptions& o) {
  std::unique_ptr<Vocabulary> vocab;
  if (!o.model.empty()) {
    auto v = Vocabulary::load(o.model);
    if (!v.ok()) return fail("cache-watch: --model: " + v.status().message());
    vocab = std::move(v.value());
  }
  auto feed = open_feed(o);
  if (!feed.ok()) return fail("cache-watch: " + feed.status().message());
  kv_events::BlockFeed& f = **feed;
  auto rec = start_recording(o, f);
  if (!rec.ok()) return fail("cache-watch: --record: " + rec.status().message());
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);
  const auto start = std::chrono::steady_clock::now();
  const auto limit = std::chrono::duration<double>(o.seconds);
  while (!g_stop && (o.seconds <= 0 || std::chrono::steady_clock::now() - start < limit))
    f.poll(50);
  if (rec->recorder) {
    f.set_batch_observer(nullptr);
    rec->blocks->finish();
    const Status st = rec->recorder->close();
    if (!st.ok()) return fail("cache-watch: --record: " + st.message());
    std::fprintf(stderr, "radixchat-cli: recorded %llu events to %s\n",
                 (unsigned long long)rec->recorder->stats().events, o.record.c_str());
  }
  if (o.json)
    std::printf("%s\n", stats_json(f).dump().c_str());
  else
    print_text(f, vocab.get());
  return 0;
}

}  // namespace

Command add_cache_watch_command(CLI::App& root) {
  auto o = std::make_shared<WatchOptions>();
  auto* app = root.add_subcommand(
      "cache-watch", "Watch a remote KV cache (vLLM/SGLang KV events or a RadixChat server)");
  app->add_option("--kv-events", o->pubs,
                  "ZeroMQ PUB endpoint (repeat: one per data-parallel rank)");
  app->add_option("--replay", o->replays,
                  "replay ROUTER endpoint, paired in order with --kv-events");
  app->add_option("--kv-events-topic", o->topic, "topic prefix to subscribe to (default: all)");
  app->add_option("--kv-events-curve-server-key", o->curve_server_key,
                  "the publisher's CURVE public key (40 Z85 characters) or its .pub file "
                  "(serve --kv-events-curve-secret; kv-events-keygen makes the pair)")
      ->needs("--kv-events");
  app->add_option("--url", o->url, "a RadixChat server, http://HOST:PORT (its /v1/cache/events)");
  app->add_option("--api-key", o->api_key, "the server's API key (with --url)")
      ->envname("RADIXCHAT_API_KEY");
  app->add_option("--model", o->model,
                  "a GGUF (or tokenizer.model) whose vocabulary gives token text");
  app->add_option("--seconds", o->seconds, "stop after N seconds (default: until SIGINT)")
      ->check(CLI::NonNegativeNumber);
  app->add_flag("--json", o->json, "print one JSON object of counts instead of the tree");
  app->add_option("--record", o->record,
                  "write what is watched as a recording (SQLite; one node per block)");
  app->add_option("--record-max-mb", o->record_max_mb, "stop recording at this file size")
      ->check(CLI::PositiveNumber);
  app->add_flag("--redact", o->redact,
                "record token ids as salted hashes and no text, for bug reports")
      ->needs("--record");
  return {app, [o] { return run_cache_watch(*o); }};
}

}  // namespace rc::cli
