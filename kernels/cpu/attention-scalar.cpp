#include <algorithm>
#include <cmath>

#include "cpu-attention.h"
#include "rc-assert.h"

namespace rc::kernels {
namespace {

float vec_dot(const float* a, const float* b, int n) {
  float s[4] = {};
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int j = 0; j < 4; ++j) s[j] += a[i + j] * b[i + j];
  }
  for (; i < n; ++i) s[0] += a[i] * b[i];
  return (s[0] + s[1]) + (s[2] + s[3]);
}
void vec_axpy(float* y, float a, const float* x, int n) {
  for (int i = 0; i < n; ++i) y[i] += a * x[i];
}
void vec_scale(float* y, float a, int n) {
  for (int i = 0; i < n; ++i) y[i] *= a;
}

}  // namespace

#define RC_ATTENTION_TASK attention_task_scalar
#include "attention-kernel.inc"
#undef RC_ATTENTION_TASK

}  // namespace rc::kernels
