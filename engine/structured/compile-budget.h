// The budget one schema compilation runs under (CompileLimits in
// radixchat/structured-output.h): the compiler charges it as it expands
// the schema and adds nodes, and it stops the compilation, by throwing the
// compiler's CompileError (schema-combine.h), as soon as a limit is passed,
// the time is up or the caller cancelled.
//
// Threading: one budget per compilation, used on the compiling thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "radixchat/structured-output.h"

namespace rc::structured {

class CompileBudget {
 public:
  explicit CompileBudget(const CompileLimits& limits);

  // One unit of expansion at `where` (a JSON pointer for the message).
  void expand(const std::string& where);
  // The grammar now holds `nodes` nodes.
  void nodes(size_t nodes);
  // One step of work that expands nothing (a oneOf pair compared, a pass
  // over the closing tables): time and cancellation only.
  void tick();
  bool was_cancelled() const { return cancelled_; }

 private:
  void check_time();

  const CompileLimits& limits_;
  std::chrono::steady_clock::time_point deadline_;
  uint64_t expansions_ = 0;
  uint32_t polls_ = 0;
  bool cancelled_ = false;
};

}  // namespace rc::structured
