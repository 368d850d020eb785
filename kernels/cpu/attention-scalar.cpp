// The attention task's primitives (attention-tiles.inc) as plain loops, for
// any head dim: the portable level, and head dims the vector tasks do not
// take.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

#include "cpu-attention.h"
#include "fp16.h"
#include "rc-assert.h"

namespace rc::kernels {
namespace {

constexpr int kTile = kAttentionTile;
constexpr int kRowBlock = 1;
// A 16-bit V element widens in software here, so every task widens V into
// an fp32 tile once rather than once per row (widening per row was much
// slower, in decode and more so in prefill).
constexpr bool kDecodeReadsVInPlace = false;

template <DType kT>
float widen(const char* row, int c) {
  if constexpr (kT == DType::f32) {
    return reinterpret_cast<const float*>(row)[c];
  } else {
    const uint16_t h = reinterpret_cast<const uint16_t*>(row)[c];
    return kT == DType::f16 ? fp16_to_f32(h) : bf16_to_f32(h);
  }
}

template <DType kT>
void load_k_tile_of(const char* const krow[], int hd, float* kt) {
  for (int t = 0; t < kTile; ++t) {
    for (int c = 0; c < hd; ++c) kt[c * kTile + t] = widen<kT>(krow[t], c);
  }
}

template <int RB>
void scores(const float* const q[], const float* kt, int hd, float scale, float* s) {
  for (int r = 0; r < RB; ++r) {
    float acc[kTile] = {};
    for (int d = 0; d < hd; ++d) {
      for (int t = 0; t < kTile; ++t) acc[t] += q[r][d] * kt[d * kTile + t];
    }
    for (int t = 0; t < kTile; ++t) s[r * kTile + t] = acc[t] * scale;
  }
}

template <DType kT, int RB>
void weighted_values(const float* p, const char* const vrow[], int hd, float* const acc[]) {
  for (int r = 0; r < RB; ++r) {
    for (int t = 0; t < kTile; ++t) {
      const float pt = p[r * kTile + t];
      for (int c = 0; c < hd; ++c) acc[r][c] += pt * widen<kT>(vrow[t], c);
    }
  }
}

void softmax_row(float* s, int valid, float& m, float& l, float* acc, int hd) {
  float mt = m;
  for (int t = 0; t < valid; ++t) mt = std::max(mt, s[t]);
  if (mt > m) {
    // exp(-inf) == 0 clears the empty initial state.
    const float c = std::exp(m - mt);
    l *= c;
    for (int i = 0; i < hd; ++i) acc[i] *= c;
    m = mt;
  }
  float sum = 0.0f;
  for (int t = 0; t < kTile; ++t) {
    s[t] = t < valid ? std::exp(s[t] - mt) : 0.0f;
    sum += s[t];
  }
  l += sum;
}

}  // namespace

#define RC_ATTENTION_TASK attention_task_scalar
#include "attention-tiles.inc"
#undef RC_ATTENTION_TASK

}  // namespace rc::kernels
