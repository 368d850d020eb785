// Scripted workloads for teaching: each scenario submits a few chat requests
// to the engine, one after another, with a one-line caption per step saying
// what the tree is about to show (prefix sharing, splits, branches,
// eviction). A teacher presses one button and talks over it for a minute,
// or advances it by hand with "Next step".
//
// Threading: DemoRunner lives on the GUI thread. Stream callbacks run on the
// engine thread and only write a small shared block behind a mutex, which
// outlives the runner (a request may finish after the panel is gone).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "radixchat/engine.h"

namespace rc::ui::panel {

struct DemoStep {
  std::string caption;
  // An assistant message whose content is "{reply:N}" is replaced by what
  // the model answered in step N, so later turns extend earlier ones exactly
  // as a chat does.
  std::vector<ChatMessage> messages;
  int max_tokens = 24;
};

struct DemoScenario {
  std::string name;
  std::string summary;  // one line for the menu
  // > 0: the lesson's pool is this small (eviction); 0: lesson default.
  // Grown when the model's prompts would not leave room for three chats.
  int64_t pool_tokens = 0;
  // Long chains (one node per turn) read best top to bottom (2); fans of
  // siblings left to right (1). 0: the panel's own choice (by its shape).
  int orientation = 0;
  // The lesson engine gets a disk tier below its pool, in a temporary folder
  // of its own (LessonEngine::build), and a radix cache whatever the demo
  // cache setting says (the tiers hang under the radix tree).
  bool disk_tier = false;
  // The lesson engine drafts replies from its tree (drafted decoding,
  // EngineConfig::speculate "tree"), whatever the app's setting; the other
  // lessons never draft.
  bool speculate = false;
  std::vector<DemoStep> steps;
};

const std::vector<DemoScenario>& demo_scenarios();

// What one step's request did, from its finished event.
struct DemoStepResult {
  bool finished = false;
  RequestMetrics metrics;       // prompt, cached (matched), computed tokens, TTFT
  std::string error;            // the request failed or was refused
  uint64_t evicted_tokens = 0;  // the cache evicted this many while it ran
  // Whole KV blocks copied out of the pool to be written to the tiers below
  // while it ran (TierStats::blocks_queued); metrics.loaded_tokens says what
  // it loaded back, metrics.tier_recomputed what it chose to recompute.
  uint64_t tier_blocks_written = 0;
};

// Runs one scenario against an engine (the lesson's own, lesson-engine.h),
// one request at a time. Pacing: each step's caption is shown for
// `lead_seconds` before its request goes, and the finished step stays for
// `seconds_per_step` before the next caption; with `by_hand` set nothing
// advances until next_step(). Whatever the mode, a step never starts while
// the panel is paused or still has queued events to show (poll's `hold`),
// so the caption always describes the events on screen.
class DemoRunner {
 public:
  DemoRunner();
  ~DemoRunner();

  // A line for the event log ("demo: ...").
  std::function<void(const std::string&)> note;

  bool start(size_t scenario, Engine* engine, double now);
  // Cancels the step in flight; the runner is idle after.
  void stop(Engine* engine);
  // GUI thread, once per frame. `hold`: the panel is paused or has events
  // queued that it has not shown yet; no new step starts and the demo does
  // not count as done.
  void poll(Engine* engine, double now, bool hold);
  // "Next step": starts the next request now (skipping the wait), also in
  // by-hand mode and while held; the caller shows queued events first.
  // False when there is no next step to start (one is in flight, or done).
  bool next_step(double now);
  bool can_advance() const;

  bool running() const { return scenario_ >= 0; }
  bool finished() const { return phase_ == Phase::done; }  // ran to its end (caption stays)
  bool in_flight() const { return phase_ == Phase::running; }
  int scenario() const { return scenario_; }
  size_t step() const { return step_; }
  size_t steps() const;
  std::string caption() const;  // the current step's caption, or a status line
  std::string reply() const;    // text streamed so far by the current step
  const std::vector<DemoStepResult>& results() const { return results_; }
  // The latest finished step (nullptr before the first ends).
  const DemoStepResult* last_result() const;
  // Seconds until the next automatic step (< 0: none scheduled).
  double seconds_to_next(double now) const;

  bool by_hand = false;
  double lead_seconds = 2.0;      // caption on screen before its request goes
  double seconds_per_step = 5.0;  // pause after a step finishes, to read the tree

 private:
  enum class Phase { idle, lead, running, settle, done };
  struct Shared;
  bool submit_step(Engine* engine, double now);

  std::shared_ptr<Shared> shared_;
  int scenario_ = -1;
  size_t step_ = 0;
  Phase phase_ = Phase::idle;
  double phase_at_ = 0;
  bool advance_ = false;  // next_step() was pressed
  uint64_t request_ = 0;
  uint64_t evicted_before_ = 0;  // the engine's evicted tokens when the step went
  uint64_t written_before_ = 0;  // and its tier blocks queued
  std::vector<std::string> replies_;
  std::vector<DemoStepResult> results_;
  std::string status_;
};

}  // namespace rc::ui::panel
