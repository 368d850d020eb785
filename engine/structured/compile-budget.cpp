#include "compile-budget.h"

#include "schema-combine.h"

namespace rc::structured {

namespace {
// The clock and the cancel callback (which may poll a socket) are read once
// in this many charges, so checking costs little next to the work charged.
constexpr uint32_t kPollEvery = 64;
}  // namespace

CompileBudget::CompileBudget(const CompileLimits& limits)
    : limits_(limits), deadline_(std::chrono::steady_clock::now() + limits.max_time) {}

void CompileBudget::expand(const std::string& where) {
  if (++expansions_ > limits_.max_expansions) {
    fail(where, "the schema expands beyond the limit of " + std::to_string(limits_.max_expansions) +
                    " schema expansions (allOf branches and $refs visited)");
  }
  tick();
}

void CompileBudget::nodes(size_t nodes) {
  if (nodes > limits_.max_nodes) {
    throw CompileError{"the schema needs more than the limit of " +
                       std::to_string(limits_.max_nodes) + " grammar nodes (automaton size)"};
  }
  tick();
}

void CompileBudget::tick() {
  if (++polls_ % kPollEvery == 0) check_time();
}

void CompileBudget::check_time() {
  if (limits_.cancelled && limits_.cancelled()) {
    cancelled_ = true;
    throw CompileError{"compilation cancelled"};
  }
  if (std::chrono::steady_clock::now() > deadline_) {
    throw CompileError{"compiling the schema takes longer than the limit of " +
                       std::to_string(limits_.max_time.count()) + " ms"};
  }
}

}  // namespace rc::structured
