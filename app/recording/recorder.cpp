#include "recording/recorder.h"

#include <filesystem>
#include <variant>

#include "recording/recorder-writer.h"

namespace rc::recording {

struct Recorder::Item {
  double t_ms = 0;
  std::variant<SnapshotItem, EventsItem, ArrivalItem, FinishItem, MetaItem> v;
};

Recorder::Recorder(std::string path, RecorderOptions options)
    : path_(std::move(path)),
      options_(std::move(options)),
      start_(std::chrono::steady_clock::now()) {}

Result<std::unique_ptr<Recorder>> Recorder::create(const std::string& path,
                                                   RecorderOptions options) {
  if (path.empty()) return Status(StatusCode::invalid_argument, "--record needs a file name");
  std::unique_ptr<Recorder> r(new Recorder(path, std::move(options)));
  auto w = Writer::create(path, r->options_);
  if (!w.ok()) return w.status();
  r->writer_ = std::move(w.value());
  r->thread_ = std::thread([p = r.get()] { p->run(); });
  return r;
}

Recorder::~Recorder() { (void)close(); }

double Recorder::now_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
      .count();
}

void Recorder::push(Item item, size_t n_events) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_ || stopped_.load()) return;
  queued_events_ += n_events;
  queue_.push_back(std::move(item));
  cv_.notify_one();
}

void Recorder::snapshot(CacheSnapshot snap, const std::string& source) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropping_ = false;
  }
  wants_snapshot_ = false;
  push(Item{now_ms(), SnapshotItem{std::move(snap), source}}, 0);
}

void Recorder::events(std::vector<CacheEvent> batch, bool overflowed, const std::string& why) {
  if (batch.empty() && !overflowed) return;
  bool drop = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The disk fell behind by more than the cap: lose these rather than
    // grow without bound, and restart replay from the next snapshot.
    if (!dropping_ && queued_events_ + batch.size() > options_.max_queued_events) {
      dropping_ = true;
      overflowed = true;
    }
    drop = dropping_;
  }
  if (overflowed) wants_snapshot_ = true;
  if (drop) {
    push(Item{now_ms(), EventsItem{{}, true, "recorder queue full (disk too slow)"}}, 0);
    return;
  }
  const size_t n = batch.size();
  push(Item{now_ms(), EventsItem{std::move(batch), overflowed, overflowed ? why : std::string()}},
       n);
}

void Recorder::request_arrived(uint64_t id, std::vector<int32_t> prompt) {
  push(Item{now_ms(), ArrivalItem{id, std::move(prompt), {}, false}}, 0);
}

void Recorder::request_arrived(uint64_t id, std::vector<ChatMessage> messages) {
  push(Item{now_ms(), ArrivalItem{id, {}, std::move(messages), true}}, 0);
}

void Recorder::request_finished(uint64_t id, const RequestMetrics& metrics, FinishReason reason,
                                std::vector<int32_t> output) {
  push(Item{now_ms(), FinishItem{id, metrics, finish_reason_name(reason), std::move(output)}}, 0);
}

void Recorder::set_meta(const std::string& key, const std::string& value) {
  push(Item{now_ms(), MetaItem{key, value}}, 0);
}

std::string Recorder::stop_message() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_message_;
}

RecorderStats Recorder::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writer_ ? writer_->stats() : RecorderStats{};
}

void Recorder::run() {
  using Clock = std::chrono::steady_clock;
  auto last_commit = Clock::now();
  std::deque<Item> batch;
  for (;;) {
    bool closing = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(options_.commit_ms),
                   [&] { return closing_ || !queue_.empty(); });
      batch.swap(queue_);
      queued_events_ = 0;
      closing = closing_;
    }
    Status s;
    std::string stop;
    for (Item& item : batch) {
      s = std::visit([&](auto& v) { return writer_->write(item.t_ms, v); }, item.v);
      if (!s.ok()) break;
      // A long backlog is committed as it goes, so the size cap stops it
      // within commit_events of the cap rather than after all of it.
      if (writer_->uncommitted_events() >= uint64_t(options_.commit_events)) {
        s = writer_->commit();
        last_commit = Clock::now();
        if (!s.ok() || !(stop = writer_->over_cap()).empty()) break;
      }
    }
    batch.clear();
    const bool due = Clock::now() - last_commit >= std::chrono::milliseconds(options_.commit_ms);
    if (s.ok() && stop.empty() && (due || closing)) {
      s = writer_->commit();
      last_commit = Clock::now();
    }
    if (s.ok() && stop.empty()) stop = writer_->over_cap();
    if (!s.ok()) stop = "recording stopped: " + s.message();
    if (!stop.empty()) {
      writer_->stop(stop);
      {
        std::lock_guard<std::mutex> lock(mu_);
        stop_message_ = stop;
        if (!s.ok() && error_.ok()) error_ = s;
        queue_.clear();
      }
      stopped_ = true;
      if (options_.on_stop) options_.on_stop(stop);
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return closing_; });
      return;
    }
    if (closing) return;
  }
}

Status Recorder::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return error_;
    closed_ = true;
    closing_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  Status s = writer_ ? writer_->finish() : Status();
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.ok() && !s.ok()) error_ = s;
  return error_;
}

}  // namespace rc::recording
