// AVX2 activation quantizer: the scalar formula of act-quant.cpp (same
// reciprocal, same product, round to nearest even), so the bytes are
// identical and a token's result does not depend on the SIMD level.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "act-quant.h"
#include "rc-assert.h"

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)

namespace rc::kernels {
namespace {

// Quantizes `len` (a multiple of 32) values; returns d.
float quantize_block(const float* x, int len, int8_t* qs) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 vmax = _mm256_setzero_ps();
  for (int j = 0; j < len; j += 8) {
    vmax = _mm256_max_ps(vmax, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)));
  }
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  const float amax = _mm_cvtss_f32(m);
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  const __m256 vid = _mm256_set1_ps(id);
  const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
  for (int j = 0; j < len; j += 32) {
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
      // cvtps rounds to nearest even under the default MXCSR, like nearbyint.
      const __m256i v = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + j + 8 * k), vid));
      q[k] = _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
    }
    // The packs interleave 128-bit lanes; the permute restores element order.
    const __m256i p16 =
        _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    const __m256i p8 = _mm256_permutevar8x32_epi32(p16, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + j), p8);
  }
  return amax / 127.0f;
}

int sum_of(const int8_t* q, int len) {
  int s = 0;
  for (int j = 0; j < len; ++j) s += q[j];
  return s;
}

}  // namespace

void quantize_act_avx2(ActFormat f, const float* x, void* dst, int64_t n) {
  switch (f) {
    case ActFormat::f32:
      std::memcpy(dst, x, size_t(n) * sizeof(float));
      return;
    case ActFormat::q8_32: {
      RC_ASSERT(n % 32 == 0);
      auto* y = static_cast<BlockQ8A*>(dst);
      for (int64_t b = 0; b < n / 32; ++b, x += 32) {
        y[b].d = quantize_block(x, 32, y[b].qs);
        y[b].sum[0] = int16_t(sum_of(y[b].qs, 16));
        y[b].sum[1] = int16_t(sum_of(y[b].qs + 16, 16));
      }
      return;
    }
    case ActFormat::q8_256: {
      RC_ASSERT(n % 256 == 0);
      auto* y = static_cast<BlockQ8K*>(dst);
      for (int64_t b = 0; b < n / 256; ++b, x += 256) {
        y[b].d = quantize_block(x, 256, y[b].qs);
        for (int i = 0; i < 16; ++i) y[b].sum16[i] = int16_t(sum_of(y[b].qs + 16 * i, 16));
        for (int i = 0; i < 8; ++i)
          y[b].bsum[i] = int16_t(y[b].sum16[2 * i] + y[b].sum16[2 * i + 1]);
      }
      return;
    }
  }
}

}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else

namespace rc::kernels {
void quantize_act_avx2(ActFormat f, const float* x, void* dst, int64_t n) {
  quantize_act(f, x, dst, n);
}
}  // namespace rc::kernels

#endif
