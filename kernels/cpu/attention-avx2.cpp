#include <algorithm>
#include <cmath>

#include "cpu-attention.h"
#include "rc-assert.h"

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
#include "avx2-util.h"

namespace rc::kernels {
namespace {

float vec_dot(const float* a, const float* b, int n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0;
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float s = avx2::hsum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}
void vec_axpy(float* y, float a, const float* x, int n) {
  const __m256 va = _mm256_set1_ps(a);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] += a * x[i];
}
void vec_scale(float* y, float a, int n) {
  const __m256 va = _mm256_set1_ps(a);
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(va, _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] *= a;
}

}  // namespace

#define RC_ATTENTION_TASK attention_task_avx2
#include "attention-kernel.inc"
#undef RC_ATTENTION_TASK

}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else

namespace rc::kernels {
void attention_task_avx2(const AttentionArgs& a, const AttentionSeq& seq, int kv_head, int i0,
                         int i1) {
  attention_task_scalar(a, seq, kv_head, i0, i1);
}
}  // namespace rc::kernels

#endif
