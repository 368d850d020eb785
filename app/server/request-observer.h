// An in-process listener to every generation the server starts, for
// `serve --record` (recording/recorder.h). Set in ServerOptions.
//
// Threads: submitted() runs on the HTTP worker right after the engine
// accepted the request; event() runs on the engine thread for each stream
// event of it (the finished one included), possibly before submitted().
// Both must return quickly and never block on I/O.
#pragma once

#include "radixchat/engine.h"

namespace rc::server {

class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  virtual void submitted(RequestId id, const GenerateRequest& request) = 0;
  virtual void event(const StreamEvent& ev) = 0;
};

}  // namespace rc::server
