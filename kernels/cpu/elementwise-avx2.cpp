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

}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else

namespace rc::kernels {
void swiglu_avx2(const float* gate, const float* up, float* out, int64_t count) {
  swiglu_scalar(gate, up, out, count);
}
}  // namespace rc::kernels

#endif
