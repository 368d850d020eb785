#include <cmath>
#include <cstdint>

#include "elementwise.h"

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
#include "avx2-util.h"

namespace rc::kernels {

void swiglu_avx2(const float* gate, const float* up, float* out, int64_t count) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    // silu(g) = g / (1 + e^-g); e^-g is clamped near 2^127 for g < -88,
    // where the result is ~1e-37 instead of ~0: harmless.
    const __m256 e = avx2::exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), g));
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  for (; i < count; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

// Four independent double accumulators: one chain of dependent double
// adds (the scalar loop) took about as long per row as the row's share of
// a 64-token prefill matmul.
void rmsnorm_row_avx2(const float* x, const float* w, float* y, int dim, float eps) {
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                    _mm256_setzero_pd()};
  int k = 0;
  for (; k + 16 <= dim; k += 16) {
    for (int j = 0; j < 4; ++j) {
      const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(x + k + 4 * j));
      acc[j] = _mm256_fmadd_pd(v, v, acc[j]);
    }
  }
  const __m256d s4 = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3]));
  const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
  double ss = _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
  for (; k < dim; ++k) ss += double(x[k]) * double(x[k]);
  const float inv = float(1.0 / std::sqrt(ss / dim + double(eps)));
  const __m256 vi = _mm256_set1_ps(inv);
  k = 0;
  for (; k + 8 <= dim; k += 8) {
    _mm256_storeu_ps(
        y + k, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + k), vi), _mm256_loadu_ps(w + k)));
  }
  for (; k < dim; ++k) y[k] = x[k] * inv * w[k];
}

void f16_row_avx2(const float* src, uint16_t* dst, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  }
  f16_row_scalar(src + i, dst + i, count - i);
}

}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else

namespace rc::kernels {
void swiglu_avx2(const float* gate, const float* up, float* out, int64_t count) {
  swiglu_scalar(gate, up, out, count);
}
void rmsnorm_row_avx2(const float* x, const float* w, float* y, int dim, float eps) {
  rmsnorm_row_scalar(x, w, y, dim, eps);
}
void f16_row_avx2(const float* src, uint16_t* dst, int64_t count) {
  f16_row_scalar(src, dst, count);
}
}  // namespace rc::kernels

#endif
