#include "draft-costs.h"

#include <algorithm>
#include <bit>

namespace rc::runtime {

namespace {

// Moving averages: a new figure weighs this much.
constexpr double kStepWeight = 0.2;
// Each verified draft scales the earlier counts by this.
constexpr double kRateDecay = 0.9;

}  // namespace

int DraftCosts::bucket_of(int tokens) {
  return std::min(int(std::bit_width(unsigned(std::max(tokens, 1)))) - 1, kBuckets - 1);
}

void DraftCosts::note_step(int tokens, double ms) {
  if (tokens <= 0 || ms < 0) return;
  Bucket& b = steps_[size_t(bucket_of(tokens))];
  if (!b.known) {
    b = {ms, double(tokens), true};
    return;
  }
  b.ms += kStepWeight * (ms - b.ms);
  b.tokens += kStepWeight * (tokens - b.tokens);
}

double DraftCosts::step_ms(int tokens) const {
  const Bucket& b = steps_[size_t(bucket_of(tokens))];
  if (!b.known) return -1;
  // Within a bucket the time is taken as proportional to the token count,
  // which overstates a step shorter than the bucket's average but never by
  // more than the bucket's factor of two.
  return b.ms * std::max(1.0, tokens / b.tokens);
}

void DraftCosts::note_draft(DraftSource source, int drafted, int accepted) {
  if (drafted <= 0 || source == DraftSource::none) return;
  Rate& r = rates_[size_t(source)];
  r.kept = kRateDecay * r.kept + accepted;
  // A draft stops at its first miss: the tokens after it were not tried.
  r.missed = kRateDecay * r.missed + (accepted < drafted ? 1 : 0);
}

double DraftCosts::keep_rate(DraftSource source) const {
  const Rate& r = rates_[size_t(source)];
  return r.kept / (r.kept + r.missed);
}

bool DraftCosts::worth(DraftSource source, int k, int step_tokens) {
  const int n = std::max(step_tokens, 1);
  const double decode = step_ms(n), verify = step_ms(n + k);
  if (decode < 0 || verify < 0) return true;
  const double a = keep_rate(source);
  double expected = 0, p = 1;
  for (int i = 0; i < k; ++i) expected += (p *= a);
  if ((n + expected) * decode >= n * verify) return true;
  Rate& r = rates_[size_t(source)];
  if (++r.refused < kExploreEvery) return false;
  r.refused = 0;
  return true;
}

}  // namespace rc::runtime
