// Stop strings over streamed text. Text that could still be the start of a
// stop string is held back until it is decided, so a stop string never
// reaches the user even when it arrives split across tokens.
//
// Threading: one per request, engine thread only.
#pragma once

#include <string>
#include <vector>

namespace rc::runtime {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);

  // Adds newly decoded text; returns the text that may be shown now. When a
  // stop string completes, `*stopped` is set and the returned text ends just
  // before it; the caller then finishes the request.
  std::string feed(const std::string& text, bool* stopped);
  // The held-back text, for when generation ends for another reason.
  std::string flush();

 private:
  std::vector<std::string> stops_;
  std::string pending_;
};

}  // namespace rc::runtime
