// RecordingView and the recording feed (recording-view.h).
#include "panel/recording-view.h"

#include <algorithm>
#include <cmath>

namespace rc::ui::panel {

namespace {

// Forward moves up to this many events are applied event by event (the
// tree animates, the log names them); farther ones rebuild from tree_at.
constexpr uint64_t kMaxForwardEvents = 2000;

class RecordingFeed : public CacheFeed {
 public:
  RecordingFeed(std::shared_ptr<RecordingSource> src, std::shared_ptr<RecordingCursor> cur)
      : src_(std::move(src)), cur_(std::move(cur)) {}

  CacheSnapshot snapshot() override {
    Result<CacheSnapshot> t = src_->tree_at(cur_->target);
    cur_->applied = cur_->target;
    if (t.ok()) {
      cur_->error.clear();
      return std::move(t.value());
    }
    // No tree there (before the first snapshot, inside a gap): an empty
    // one at that seq, and the reason on the timeline.
    cur_->error = t.status().message();
    CacheSnapshot empty;
    empty.page_size = src_->page_size();
    empty.total_pages = src_->total_pages();
    empty.next_seq = cur_->target;
    empty.nodes.push_back(CacheNodeInfo{});
    return empty;
  }

  std::vector<CacheEvent> drain(bool* overflowed) override {
    const uint64_t to = cur_->target, from = cur_->applied;
    if (to == from) return {};
    if (to < from || to - from > kMaxForwardEvents || !cur_->error.empty()) {
      *overflowed = true;  // the panel resyncs from snapshot()
      return {};
    }
    Result<std::vector<CacheEvent>> ev = src_->events(from, to);
    if (!ev.ok()) {
      *overflowed = true;
      return {};
    }
    cur_->applied = to;
    return std::move(ev.value());
  }

  // Hit rate and counts of the requests matched before the cursor.
  CacheStats cache_stats() override {
    CacheStats s;
    s.total_pages = src_->total_pages();
    for (const RecordedRequest& r : src_->requests()) {
      if (r.seq >= cur_->applied) break;
      if (r.matched_tokens < 0) continue;
      ++s.match_calls;
      s.prompt_tokens += uint64_t(r.prompt_tokens);
      s.hit_tokens += uint64_t(r.matched_tokens);
    }
    return s;
  }

  bool request_totals(RequestTotals* out) override {
    RequestTotals t;
    double ttft = 0;
    for (const RecordedRequest& r : src_->requests()) {
      if (r.seq >= cur_->applied) break;
      if (r.finish.empty() || r.matched_tokens < 0) continue;
      ++t.finished;
      t.prompt_tokens += uint64_t(r.prompt_tokens);
      t.cached_tokens += uint64_t(r.matched_tokens);
      ttft += std::max(r.ttft_ms, 0.0);
    }
    t.ttft_ms_mean = t.finished ? ttft / double(t.finished) : 0;
    *out = t;
    return true;
  }

  std::string detokenize(const std::vector<Token>& tokens) override {
    return src_->detokenize(tokens);
  }
  std::string cache_setting() override { return src_->policy(); }
  int64_t pool_tokens() override { return src_->total_pages() * src_->page_size(); }
  std::string describe() override { return "recording " + src_->describe(); }

 private:
  std::shared_ptr<RecordingSource> src_;
  std::shared_ptr<RecordingCursor> cur_;
};

}  // namespace

std::unique_ptr<CacheFeed> make_recording_feed(std::shared_ptr<RecordingSource> source,
                                               std::shared_ptr<RecordingCursor> cursor) {
  return std::make_unique<RecordingFeed>(std::move(source), std::move(cursor));
}

// --- Record / Stop -----------------------------------------------------------

std::string RecordingView::start_recording(const std::string& path) {
  if (!starter) return "recording is not available in this build";
  if (sink_) return "already recording";
  auto s = starter(path);
  if (!s.ok()) return last_record_status_ = s.status().message();
  sink_ = std::move(s.value());
  last_record_status_.clear();
  return "";
}

void RecordingView::stop_recording(const std::string& why) {
  if (!sink_) return;
  const std::string err = sink_->close();
  const std::string status = sink_->status();  // after close: what was written
  sink_.reset();
  last_record_status_ = err.empty() ? status : "recording failed: " + err;
  if (!why.empty()) last_record_status_ = why + "; " + last_record_status_;
}

std::string RecordingView::record_status() const {
  return sink_ ? sink_->status() : last_record_status_;
}

// --- An opened recording -------------------------------------------------------

std::string RecordingView::open(const std::string& path) {
  if (!opener || !install) return open_error = "opening recordings is not available in this build";
  auto s = opener(path);
  if (!s.ok()) return open_error = s.status().message();
  source_ = std::shared_ptr<RecordingSource>(std::move(s.value()));
  cursor_ = std::make_shared<RecordingCursor>();
  // Start at the end: the state the recording left the cache in.
  cursor_->target = cursor_->applied = source_->end_seq();
  selected_request = -1;
  miss_for_ = -2;
  advisor_done_ = false;
  advisor_.clear();
  playing = false;
  open_error.clear();
  std::unique_ptr<CacheFeed> feed = make_recording_feed(source_, cursor_);
  feed_ = feed.get();
  install(std::move(feed));
  return "";
}

void RecordingView::close(bool reinstall) {
  if (!source_) return;
  source_.reset();
  feed_ = nullptr;
  playing = false;
  if (reinstall && install) install(nullptr);
}

void RecordingView::seek(uint64_t seq) {
  if (!source_) return;
  cursor_->target = std::clamp(seq, source_->first_seq(), source_->end_seq());
  // The selected request follows the cursor: the latest one at or before it.
  const auto& reqs = source_->requests();
  int pick = -1;
  for (size_t i = 0; i < reqs.size() && reqs[i].seq <= cursor_->target; ++i) pick = int(i);
  selected_request = pick;
}

void RecordingView::step_event(int dir) {
  if (!source_) return;
  const uint64_t t = cursor_->target;
  if (dir < 0 && t > 0) seek(t - 1);
  if (dir > 0) seek(t + 1);
}

bool RecordingView::step_request(int dir) {
  if (!source_) return false;
  const auto& reqs = source_->requests();
  const uint64_t t = cursor_->target;
  if (dir > 0) {
    for (size_t i = 0; i < reqs.size(); ++i)
      if (reqs[i].seq > t) return jump_request(i), true;
  } else {
    for (size_t i = reqs.size(); i-- > 0;)
      if (reqs[i].seq < t) return jump_request(i), true;
  }
  return false;
}

void RecordingView::jump_request(size_t index) {
  if (!source_ || index >= source_->requests().size()) return;
  // The tree the request met: every event before its match.
  cursor_->target =
      std::clamp(source_->requests()[index].seq, source_->first_seq(), source_->end_seq());
  selected_request = int(index);
}

const MissView& RecordingView::miss() {
  if (miss_for_ != selected_request) {
    miss_for_ = selected_request;
    miss_ = MissView{};
    if (source_ && selected_request >= 0) miss_ = source_->explain(size_t(selected_request));
  }
  return miss_;
}

void RecordingView::tick(double now) {
  const double dt = last_tick_ < 0 ? 0 : std::clamp(now - last_tick_, 0.0, 0.25);
  last_tick_ = now;
  if (!playing || !source_) return;
  play_carry_ += dt * speed;
  const double whole = std::floor(play_carry_);
  if (whole < 1) return;
  play_carry_ -= whole;
  seek(cursor_->target + uint64_t(whole));
  if (cursor_->target >= source_->end_seq()) playing = false;
}

const std::vector<std::string>& RecordingView::advisor() {
  if (!advisor_done_ && source_) {
    advisor_ = source_->advisor_report();
    advisor_done_ = true;
  }
  return advisor_;
}

}  // namespace rc::ui::panel
