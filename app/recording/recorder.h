// Writes a recording (recording-format.h) off the engine thread.
//
// Producers (any thread: the event tap, request callbacks on the engine
// thread, a GUI button) only append to an in-memory queue under a mutex and
// never wait for the disk. One writer thread owned by the Recorder drains
// the queue into SQLite, committing a transaction every `commit_events`
// events or `commit_ms` milliseconds, whichever comes first, so a process
// killed mid-run leaves a readable file holding everything up to the last
// commit (WAL journal).
//
// The writer replays the events it writes (replay-tree.h): from that tree it
// stores a snapshot of its own every `snapshot_every` events (so a reader
// seeks quickly) and it tells which request each match event belongs to.
//
// Limits: when the file reaches `max_bytes`, or the queue holds more than
// `max_queued_events` (the disk cannot keep up), the recorder stops writing,
// says why in meta('stopped') and in stop_message(), and calls on_stop once
// (on the writer thread). Dropped events after a queue overflow are a gap
// (gaps table) and the next snapshot() restarts replay.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "radixchat/engine.h"

namespace rc::recording {

struct RecorderOptions {
  int commit_events = 4096;
  int commit_ms = 250;
  uint64_t snapshot_every = 4096;  // events between the writer's own snapshots
  int64_t max_bytes = int64_t(1) << 30;
  size_t max_queued_events = size_t(1) << 20;
  std::string source;  // meta('source'): "bench", "serve", "cache-watch", "panel"
  // Token ids written as salted hashes, meta('model_path') not written
  // (redaction.h): a file to attach to a bug report.
  bool redact = false;
  // Turns a request's messages into its prompt tokens; runs on the writer
  // thread (Engine::render_chat is safe there). Unset: only token prompts.
  std::function<Result<std::vector<int32_t>>(const std::vector<ChatMessage>&)> render;
  std::function<void(const std::string&)> on_stop;
};

struct RecorderStats {
  uint64_t events = 0;  // written
  uint64_t snapshots = 0;
  uint64_t requests = 0;
  uint64_t commits = 0;
  uint64_t gaps = 0;
  int64_t bytes = 0;  // file size at the last commit
};

class Recorder {
 public:
  // Creates `path` (which must not exist) and starts the writer thread.
  static Result<std::unique_ptr<Recorder>> create(const std::string& path, RecorderOptions options);
  ~Recorder();  // close()
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // ---- producers: any thread, never block on I/O ----
  // A whole tree; `source` "engine" for Engine::cache_snapshot(). The first
  // one starts replay; after a gap the next one restarts it.
  void snapshot(CacheSnapshot snap, const std::string& source = "engine");
  // Events in seq order. `overflowed`: the producer lost events before these
  // (recorded as a gap; send a snapshot next).
  void events(std::vector<CacheEvent> batch, bool overflowed = false,
              const std::string& why = "engine event queue overflowed");
  // A request arrived: its prompt as tokens, or as messages rendered on the
  // writer thread with options.render.
  void request_arrived(uint64_t id, std::vector<int32_t> prompt);
  void request_arrived(uint64_t id, std::vector<ChatMessage> messages);
  void request_finished(uint64_t id, const RequestMetrics& metrics, FinishReason reason,
                        std::vector<int32_t> output);
  // Free-form fact for meta (model, policy...).
  void set_meta(const std::string& key, const std::string& value);

  // True after a gap or overflow until a snapshot() arrives: the producer
  // should take one.
  bool wants_snapshot() const { return wants_snapshot_.load(); }
  bool stopped() const { return stopped_.load(); }
  std::string stop_message() const;
  RecorderStats stats() const;
  const std::string& path() const { return path_; }

  // Writes what is queued, commits, stops the thread and closes the file
  // (folding the WAL back into it). Returns the first write error, if any.
  // Idempotent.
  Status close();

 private:
  struct Item;
  class Writer;
  Recorder(std::string path, RecorderOptions options);
  void push(Item item, size_t n_events);
  double now_ms() const;
  void run();

  const std::string path_;
  const RecorderOptions options_;
  const std::chrono::steady_clock::time_point start_;
  std::unique_ptr<Writer> writer_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  size_t queued_events_ = 0;
  bool closing_ = false;
  bool dropping_ = false;  // queue overflowed: drop events until a snapshot
  std::string stop_message_;
  Status error_;
  std::atomic<bool> wants_snapshot_{true};
  std::atomic<bool> stopped_{false};
  std::thread thread_;
  bool closed_ = false;
};

}  // namespace rc::recording
