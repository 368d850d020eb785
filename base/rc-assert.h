// RC_ASSERT: invariant checks that stay on in release builds.
// A violated invariant is a bug, not an input error: it prints file, line and
// the failed expression to stderr and aborts. Input errors are values
// (radixchat/status.h), never asserts.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace rc::detail {
[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "RC_ASSERT failed: %s at %s:%d%s%s\n", expr, file, line, msg ? ": " : "",
               msg ? msg : "");
  std::abort();
}
}  // namespace rc::detail

#define RC_ASSERT(cond)                                                           \
  do {                                                                            \
    if (!(cond)) ::rc::detail::assert_fail(#cond, __FILE__, __LINE__, nullptr);   \
  } while (0)

#define RC_ASSERT_MSG(cond, msg)                                                  \
  do {                                                                            \
    if (!(cond)) ::rc::detail::assert_fail(#cond, __FILE__, __LINE__, (msg));     \
  } while (0)
