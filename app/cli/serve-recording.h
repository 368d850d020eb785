// `serve --record FILE`: a recording of the served engine's cache. Events
// come from the server's event hub (the engine queue's one reader) through
// a subscription; requests from the server's RequestObserver.
#pragma once

#include <memory>
#include <string>

#include "recording/event-tap.h"
#include "recording/recorder.h"
#include "server.h"

namespace rc::cli {

class ServeRecording {
 public:
  // Creates the file (redacted: recording/redaction.h); hand observer() to
  // ServerOptions before the server is created, then attach() once it is.
  static Result<std::unique_ptr<ServeRecording>> create(const std::string& path, int max_mb,
                                                        bool redact, Engine& engine);
  ~ServeRecording();
  std::shared_ptr<server::RequestObserver> observer() const { return observer_; }
  Status attach(server::Server& srv);
  // Stops the tap (last events, a final snapshot) and closes the file.
  Status stop();

 private:
  ServeRecording() = default;
  Engine* engine_ = nullptr;
  std::unique_ptr<recording::Recorder> recorder_;
  std::shared_ptr<server::RequestObserver> observer_;
  std::unique_ptr<recording::EventTap> tap_;
};

}  // namespace rc::cli
