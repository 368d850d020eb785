#include "int-range.h"

#include "json-phases.h"

namespace rc::structured {

namespace {

using i128 = __int128;

i128 pow10(int j) {
  i128 p = 1;
  while (j-- > 0) p *= 10;
  return p;
}

// Whether [lo, hi] holds a value of `r`.
bool hits(const IntRange& r, i128 lo, i128 hi) {
  if (r.bounded) {
    if (lo < r.lo) lo = r.lo;
    if (hi > r.hi) hi = r.hi;
  }
  if (lo > hi) return false;
  if (r.step <= 0) return true;
  // The first multiple of step at or above lo.
  i128 q = lo / r.step;
  if (q * r.step < lo) ++q;
  return q * r.step <= hi;
}

// Signed values of magnitudes [mlo, mhi].
bool hits_magnitudes(const IntRange& r, bool negative, i128 mlo, i128 mhi) {
  return negative ? hits(r, -mhi, -mlo) : hits(r, mlo, mhi);
}

}  // namespace

bool int_allowed(const IntRange& r, bool negative, uint64_t magnitude) {
  if (negative && magnitude == 0) return false;  // no "-0"
  const i128 m = magnitude;
  return hits_magnitudes(r, negative, m, m);
}

int int_digits_needed(const IntRange& r, bool negative, uint64_t magnitude, int digits) {
  if (digits == 0) {
    // One or more digits, no leading zero except "0" itself.
    if (!negative && hits(r, 0, 0)) return 1;
    for (int n = 1; n <= kMaxIntDigits; ++n) {
      const i128 lo = n == 1 ? 1 : pow10(n - 1);
      if (hits_magnitudes(r, negative, lo, pow10(n) - 1)) return n;
    }
    return -1;
  }
  if (magnitude == 0) return int_allowed(r, negative, 0) ? 0 : -1;
  for (int j = 0; digits + j <= kMaxIntDigits; ++j) {
    const i128 lo = i128(magnitude) * pow10(j);
    if (hits_magnitudes(r, negative, lo, lo + pow10(j) - 1)) return j;
  }
  return -1;
}

int int_min_bytes(const IntRange& r) {
  int best = -1;
  for (bool negative : {false, true}) {
    const int n = int_digits_needed(r, negative, 0, 0);
    if (n >= 0 && (best < 0 || n + negative < best)) best = n + negative;
  }
  return best;
}

}  // namespace rc::structured
