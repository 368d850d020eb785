// The lesson's own engine: demos run in an isolated KV cache, never in the
// user's.
//
// Why a second Engine rather than swapping the user's cache: the user's
// engine keeps its cache, pool, policy, pinned presets and any reply in
// flight exactly as they were (nothing to snapshot or restore, nothing to
// get wrong when a demo is stopped half way), and the engine API needs no
// new mutation. The lesson engine opens the same model file as the user's
// (the weights are mmapped, so the OS shares their pages; a GPU backend
// copies them once more, and falls back to the CPU when they do not fit),
// with the demo's policy and a small pool. It is built on a worker thread
// so the panel keeps drawing while it loads.
//
// Threading: GUI thread only (the builder thread is internal). Destroying a
// LessonEngine cancels a build in progress and waits for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "panel/cache-feed.h"
#include "radixchat/engine.h"

namespace rc::ui::panel {

// The config of an engine like `user` (same model file, backend, KV element
// type and context) with its own `policy` cache of `pool_tokens` tokens,
// evicting least recently used leaves first (what the lessons narrate).
EngineConfig lesson_config(const ModelInfo& user, CacheSetting policy, int64_t pool_tokens);

struct DemoScenario;
// The lesson_config of scenario `s`: the demo cache setting `policy`, or
// radix for a lesson with a disk tier (the tiers hang under the radix
// tree), and drafted decoding when the lesson shows it.
EngineConfig scenario_config(const ModelInfo& user, const DemoScenario& s, CacheSetting policy,
                             int64_t pool_tokens);

// The pool a scenario's lesson gets: its own wish, grown so that its
// longest request fits, or else `fallback`, grown so that three of them
// fit; `prompt_tokens(step)` says how many tokens a step's prompt renders
// to (negative: unknown).
int64_t lesson_pool_tokens(size_t scenario, int64_t fallback,
                           const std::function<int64_t(size_t step)>& prompt_tokens);

class LessonEngine {
 public:
  using Factory = std::function<Result<std::unique_ptr<Engine>>(const EngineConfig&)>;
  LessonEngine();
  ~LessonEngine();

  enum class State { none, building, ready, failed };

  // Starts building a fresh engine (any previous one is released first).
  // `temp_disk`: it gets a disk tier in a new temporary folder of its own
  // (never the app's: the folder is locked by whoever opens it), removed
  // on release().
  void build(const EngineConfig& config, bool temp_disk = false);
  // Once per frame: collects a finished build. Returns the state.
  State poll();
  State state() const { return state_; }
  Engine* engine() const { return engine_.get(); }
  const std::string& error() const { return error_; }
  const EngineConfig& config() const { return config_; }
  // The temporary disk tier's folder ("" without one).
  const std::string& temp_disk() const { return temp_disk_; }
  // Cancels a build and destroys the engine (its requests end cancelled).
  void release();

  // Engine::create by default; tests may substitute one.
  Factory factory;

 private:
  State state_ = State::none;
  EngineConfig config_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::future<Result<std::unique_ptr<Engine>>> pending_;
  std::unique_ptr<Engine> engine_;
  std::string error_;
  std::string temp_disk_;
};

// The lesson engine's feed: the engine feed with a describe() that says the
// tree is the lesson's, not the user's.
std::unique_ptr<CacheFeed> make_lesson_feed(Engine& engine);

}  // namespace rc::ui::panel
