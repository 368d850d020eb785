// Scripted workloads for teaching: each scenario submits a few chat requests
// to the engine, one after another, with a one-line caption per step saying
// what the tree is about to show (prefix sharing, splits, branches,
// eviction). A teacher presses one button and talks over it for a minute.
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
  std::string summary;      // one line for the menu
  int64_t pool_tokens = 0;  // > 0: ask for a pool this small first (eviction)
  std::vector<DemoStep> steps;
};

const std::vector<DemoScenario>& demo_scenarios();

class DemoRunner {
 public:
  DemoRunner();
  ~DemoRunner();

  // Asked when a scenario wants a smaller pool: (policy, pool tokens). The
  // owner recreates the engine and calls engine_changed().
  std::function<void(const std::string&, int64_t)> request_pool;
  // A line for the event log ("demo: ...").
  std::function<void(const std::string&)> note;

  bool start(size_t scenario, Engine* engine, const std::string& policy, double now);
  void stop(Engine* engine);
  // GUI thread, once per frame: submits the next step when the previous one
  // finished and its caption had time to be read.
  void poll(Engine* engine, double now);
  // The engine was replaced (or dropped): in-flight requests are gone.
  void engine_changed(Engine* engine, double now);

  bool running() const { return scenario_ >= 0; }
  bool finished() const { return phase_ == Phase::done; }  // ran to its end (caption stays)
  bool waiting_for_pool() const { return phase_ == Phase::wait_pool; }
  int scenario() const { return scenario_; }
  size_t step() const { return step_; }
  size_t steps() const;
  std::string caption() const;    // the current step's caption, or a status line
  std::string reply() const;      // text streamed so far by the current step
  double seconds_per_step = 1.5;  // pause after a step finishes, to read the tree

 private:
  enum class Phase { idle, wait_pool, submit, running, pause, done };
  struct Shared;
  bool submit_step(Engine* engine, double now);

  std::shared_ptr<Shared> shared_;
  int scenario_ = -1;
  size_t step_ = 0;
  Phase phase_ = Phase::idle;
  double phase_at_ = 0;
  uint64_t request_ = 0;
  std::vector<std::string> replies_;
  std::string status_;
};

}  // namespace rc::ui::panel
