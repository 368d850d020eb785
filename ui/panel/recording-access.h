// The panel's narrow view of cache recordings (docs/architecture.md section 15). ui/ may not see
// SQLite or the recording library (app/recording): the app implements these
// interfaces (app/gui/recording-source) and hands the panel factories, as it
// does with the remote-cache connector.
//
//   RecordingSource  an opened recording: facts, requests, timeline samples,
//                    the tree at any event seq, events, a miss explanation
//                    per request and the layout advisor's report.
//   RecordingSink    a recording being written from the panel: the panel
//                    passes it the events it drains from the local engine;
//                    the app records requests and snapshots itself.
//
// Thread contract: GUI thread only (the sink hands work to its own writer
// thread and never blocks on the disk).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "radixchat/cache.h"
#include "radixchat/status.h"

namespace rc::ui::panel {

struct RecordedRequest {
  uint64_t id = 0;
  uint64_t seq = 0;      // where it sits on the timeline: its match event (else arrival)
  bool matched = false;  // a match event of its own was recorded
  int64_t prompt_tokens = 0;
  int64_t matched_tokens = -1;  // -1: never matched
  double ttft_ms = -1;
  std::string finish;  // empty: never finished in the recording
  std::vector<Token> prompt;
};

// One point of the timeline's plots, at event seq `seq`.
struct TimelineSample {
  uint64_t seq = 0;
  double hit_rate = 0;        // cumulative over the requests matched before seq
  int64_t cached_tokens = 0;  // tokens in the tree
  int64_t nodes = 0;
};

// Why a prompt matched less than its length, as the panel shows it (the
// recording's Request tab, and the Node tab for a live chat message).
struct MissView {
  bool ok = false;
  std::string error;  // why there is no explanation (never matched, no tree there)
  uint64_t at_seq = 0;
  int64_t prompt_tokens = 0;
  int64_t matched_tokens = 0;  // served from the cache when it ran; -1: unknown (live)
  int64_t divergence = 0;   // prompt tokens on the best cached path
  bool realigned = false;   // the cached path agrees again after a span
  int64_t would_reuse = 0;  // tokens reused had the span matched
  int64_t run_after = 0;
  std::string before;       // text just before the divergence
  std::string prompt_span;  // the prompt's text there
  std::string cached_span;  // the cached path's text there
  std::string cached_next;  // first text of the best cached path below it
};

class RecordingSource {
 public:
  virtual ~RecordingSource() = default;
  virtual std::string describe() const = 0;  // file name, source, model, policy
  virtual uint64_t first_seq() const = 0;    // the earliest seq a tree exists at
  virtual uint64_t end_seq() const = 0;      // one past the last event
  virtual int64_t total_pages() const = 0;
  virtual int page_size() const = 0;
  virtual std::string policy() const = 0;
  virtual const std::vector<RecordedRequest>& requests() const = 0;
  virtual const std::vector<TimelineSample>& samples() const = 0;
  // The tree after every event before `seq` (next_seq == seq).
  virtual Result<CacheSnapshot> tree_at(uint64_t seq) = 0;
  // Events with from <= seq < to.
  virtual Result<std::vector<CacheEvent>> events(uint64_t from, uint64_t to) = 0;
  // Why request `index` (into requests()) matched less than its prompt.
  virtual MissView explain(size_t index) = 0;
  // The layout advisor over the whole recording, as lines of text
  // (computed on first use: it replays every request twice per finding).
  virtual std::vector<std::string> advisor_report() = 0;
  virtual std::string detokenize(const std::vector<Token>& tokens) = 0;
};

class RecordingSink {
 public:
  virtual ~RecordingSink() = default;
  // Events the panel drained from the local engine, in seq order;
  // `overflowed`: some were lost before these (a gap, then a snapshot).
  virtual void events(const std::vector<CacheEvent>& batch, bool overflowed) = 0;
  // "recording to FILE: N events, M requests, 1.2 MiB", or why it stopped
  // by itself (the size cap).
  virtual std::string status() const = 0;
  virtual bool stopped() const = 0;
  // Finishes the file; "" or the first write error.
  virtual std::string close() = 0;
};

// Writes `tree` as a picture: SVG, or PNG when `path` ends in .png. `label`
// turns a node's tokens into its text. Returns "" or why not. The app
// implements it (app/recording's tree-svg / tree-png).
using TreeExporter = std::function<std::string(
    const CacheSnapshot& tree, const std::function<std::string(const std::vector<Token>&)>& label,
    const std::string& title, const std::string& path)>;

// Why `prompt` misses on `tree` (a live cache's snapshot): the app
// implements it with recording/miss-analysis, as for recordings, so the
// panel never sees app/recording. `text` renders tokens (the feed's
// detokenize). matched_tokens comes back -1: the panel knows no match time.
using MissExplainer =
    std::function<MissView(const CacheSnapshot& tree, const std::vector<Token>& prompt,
                           const std::function<std::string(const std::vector<Token>&)>& text)>;

using RecordingOpener =
    std::function<Result<std::unique_ptr<RecordingSource>>(const std::string& path)>;
// Starts recording the local engine into `path` (a new file).
using RecordingStarter =
    std::function<Result<std::unique_ptr<RecordingSink>>(const std::string& path)>;

}  // namespace rc::ui::panel
