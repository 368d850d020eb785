// How deeply a request body nests, found without building anything: a body
// of 20,000 '[' costs a JSON DOM hundreds of megabytes (and a recursive
// destructor as deep), so every body is scanned first and one nesting
// deeper than the limit is refused before any parser sees it, whatever
// field it is in, whether the JSON is complete and whatever the
// Content-Type says (docs/server.md, "Limits").
//
// Threading: pure function.
#pragma once

#include <optional>
#include <string_view>

#include "api-error.h"

namespace rc::server {

inline constexpr int kMaxJsonDepth = 128;

// 400 "nested_too_deep" when `body`, read as JSON text, opens more than
// `max_depth` arrays and objects inside each other (brackets inside
// strings do not count); nothing otherwise, also for text that is not
// JSON (the parser reports that).
std::optional<ApiError> check_json_depth(std::string_view body, int max_depth = kMaxJsonDepth);

}  // namespace rc::server
