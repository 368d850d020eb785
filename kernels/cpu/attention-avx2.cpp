#include <algorithm>
#include <cmath>

#include "cpu-attention.h"
#include "fp16.h"
#include "rc-assert.h"

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
#include "avx2-util.h"

namespace rc::kernels {
namespace {

// Four keys at a time: the query is loaded once per 8 dims for four dots,
// and the four horizontal sums share one reduction.
void vec_dots(float* out, const float* q, const float* const* rows, int tn, int n, float scale) {
  const int n8 = n & ~7;
  int t = 0;
  for (; t + 4 <= tn; t += 4) {
    const float *r0 = rows[t], *r1 = rows[t + 1], *r2 = rows[t + 2], *r3 = rows[t + 3];
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < n8; i += 8) {
      const __m256 qv = _mm256_loadu_ps(q + i);
      a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(r0 + i), a0);
      a1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(r1 + i), a1);
      a2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(r2 + i), a2);
      a3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(r3 + i), a3);
    }
    const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    if (n8 < n) {
      alignas(16) float tail[4] = {};
      for (int i = n8; i < n; ++i) {
        tail[0] += q[i] * r0[i];
        tail[1] += q[i] * r1[i];
        tail[2] += q[i] * r2[i];
        tail[3] += q[i] * r3[i];
      }
      s4 = _mm_add_ps(s4, _mm_load_ps(tail));
    }
    _mm_storeu_ps(out + t, _mm_mul_ps(s4, _mm_set1_ps(scale)));
  }
  for (; t < tn; ++t) {
    __m256 a0 = _mm256_setzero_ps();
    for (int i = 0; i < n8; i += 8) {
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(rows[t] + i), a0);
    }
    float s = avx2::hsum(a0);
    for (int i = n8; i < n; ++i) s += q[i] * rows[t][i];
    out[t] = s * scale;
  }
}

// The accumulator stays in registers for 32 dims while every row of the
// tile is added in, instead of a load and store per row.
void vec_weighted_sum(float* acc, const float* w, const float* const* rows, int tn, int n) {
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 r0 = _mm256_loadu_ps(acc + i), r1 = _mm256_loadu_ps(acc + i + 8);
    __m256 r2 = _mm256_loadu_ps(acc + i + 16), r3 = _mm256_loadu_ps(acc + i + 24);
    for (int t = 0; t < tn; ++t) {
      const __m256 wt = _mm256_set1_ps(w[t]);
      const float* v = rows[t] + i;
      r0 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(v), r0);
      r1 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(v + 8), r1);
      r2 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(v + 16), r2);
      r3 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(v + 24), r3);
    }
    _mm256_storeu_ps(acc + i, r0);
    _mm256_storeu_ps(acc + i + 8, r1);
    _mm256_storeu_ps(acc + i + 16, r2);
    _mm256_storeu_ps(acc + i + 24, r3);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 r0 = _mm256_loadu_ps(acc + i);
    for (int t = 0; t < tn; ++t)
      r0 = _mm256_fmadd_ps(_mm256_set1_ps(w[t]), _mm256_loadu_ps(rows[t] + i), r0);
    _mm256_storeu_ps(acc + i, r0);
  }
  for (; i < n; ++i) {
    for (int t = 0; t < tn; ++t) acc[i] += w[t] * rows[t][i];
  }
}

void vec_scale(float* y, float a, int n) {
  const __m256 va = _mm256_set1_ps(a);
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(va, _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] *= a;
}
float vec_exp_sum(float* s, float m, int n) {
  const __m256 vm = _mm256_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = avx2::exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + i), vm));
    _mm256_storeu_ps(s + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  float sum = avx2::hsum(acc);
  for (; i < n; ++i) {
    s[i] = std::exp(s[i] - m);
    sum += s[i];
  }
  return sum;
}

// F16C widens 8 halves per instruction; bf16 is the top half of an fp32,
// so widening is a zero-extend and a 16-bit shift.
void vec_widen(float* dst, const void* src, DType t, int n) {
  const auto* h = static_cast<const uint16_t*>(src);
  int i = 0;
  if (t == DType::f16) {
    for (; i + 8 <= n; i += 8) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(x));
    }
    for (; i < n; ++i) dst[i] = fp16_to_f32_portable(h[i]);
  } else {
    for (; i + 8 <= n; i += 8) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
      const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(x), 16);
      _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(w));
    }
    for (; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
  }
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
