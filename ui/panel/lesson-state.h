// Lesson mode's part of the cache panel (lesson-panel.cpp): the lesson's
// own engine, the demo it runs, the choices for the next one, and the
// user's feed parked while the lesson's tree is in front.
//
// GUI thread only. Owned by CachePanelState.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "panel/cache-feed.h"
#include "panel/demo-scenarios.h"
#include "panel/lesson-engine.h"

namespace rc::ui::panel {

struct LessonState {
  // A demo runs in a lesson engine of its own (lesson-engine.h): while it is
  // shown the user's feed is parked here, untouched (pool, policy, pinned
  // prompts), and it comes back when the lesson is stopped, or when the user
  // chats again after the demo finished.
  LessonEngine host;
  DemoRunner demo;
  int policy = 0;  // index into CachePanelState::kCachePolicies: the demos' cache
  // A demo's pool unless it asks for less (or its prompts need more): three
  // of the longest demo requests fit, and a 7B F16 model's is 512 MiB.
  int64_t pool_tokens = 1024;
  std::string error;  // why the latest lesson could not start

  int scenario = -1;                     // the lesson running; -1: none
  std::unique_ptr<CacheFeed> user_feed;  // parked while the lesson is shown
  uint64_t user_requests_seen = 0;       // the user's requests when it started
  size_t fitted = 0;                     // finished steps the view was fitted to
};

}  // namespace rc::ui::panel
