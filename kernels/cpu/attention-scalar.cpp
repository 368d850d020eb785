#include <algorithm>
#include <cmath>

#include "cpu-attention.h"
#include "fp16.h"
#include "rc-assert.h"

namespace rc::kernels {
namespace {

void vec_dots(float* out, const float* q, const float* const* rows, int tn, int n, float scale) {
  for (int t = 0; t < tn; ++t) {
    float s[4] = {};
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      for (int j = 0; j < 4; ++j) s[j] += q[i + j] * rows[t][i + j];
    }
    for (; i < n; ++i) s[0] += q[i] * rows[t][i];
    out[t] = ((s[0] + s[1]) + (s[2] + s[3])) * scale;
  }
}
void vec_weighted_sum(float* acc, const float* w, const float* const* rows, int tn, int n) {
  for (int t = 0; t < tn; ++t) {
    for (int i = 0; i < n; ++i) acc[i] += w[t] * rows[t][i];
  }
}
void vec_scale(float* y, float a, int n) {
  for (int i = 0; i < n; ++i) y[i] *= a;
}
float vec_exp_sum(float* s, float m, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    s[i] = std::exp(s[i] - m);
    sum += s[i];
  }
  return sum;
}

void vec_widen(float* dst, const void* src, DType t, int n) {
  const auto* h = static_cast<const uint16_t*>(src);
  if (t == DType::f16) {
    for (int i = 0; i < n; ++i) dst[i] = fp16_to_f32(h[i]);
  } else {
    for (int i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
  }
}

}  // namespace

#define RC_ATTENTION_TASK attention_task_scalar
#include "attention-kernel.inc"
#undef RC_ATTENTION_TASK

}  // namespace rc::kernels
