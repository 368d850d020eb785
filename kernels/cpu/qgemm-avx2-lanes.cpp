// The 256-bit token-lane Q8_0 prefill kernel of qgemm-avx2-lanes.h.
#include "qgemm-avx2-lanes.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "act-quant.h"
#include "quant-blocks.h"
#include "simd-level.h"

namespace rc::kernels {

namespace {

constexpr int64_t kL = kQ256Tokens;

Q512Fn q256_table(DType t);  // the kernels of the AVX2 region below

// Per weight row of a tile: the magnitudes of the quants [K] (bytes, |-128|
// read as 128), then d as fp32 [K/32].
int64_t row_scratch(int64_t K) { return (K + K / 32 * 4 + 63) / 64 * 64; }

}  // namespace

// Per-group layout: quants [K/4][8 tokens][4 bytes], then the block scales
// [K/32][8] as fp32.
int64_t q256_group_bytes(DType, int64_t K) { return K * kL + K / 32 * kL * 4; }

int64_t q256_scratch_bytes(DType, int64_t K) { return kQ256Rows * row_scratch(K); }

void q256_pack_acts(DType, const uint8_t* act, int64_t act_stride, int tokens, int64_t K,
                    uint8_t* dst) {
  std::memset(dst, 0, size_t(q256_group_bytes(DType::q8_0, K)));
  auto* d = reinterpret_cast<float*>(dst + K * kL);
  for (int tok = 0; tok < tokens; ++tok) {
    const auto* x = reinterpret_cast<const BlockQ8A*>(act + tok * act_stride);
    for (int64_t b = 0; b < K / 32; ++b) {
      for (int e = 0; e < 32; e += 4)
        std::memcpy(dst + ((32 * b + e) / 4 * kL + tok) * 4, x[b].qs + e, 4);
      d[b * kL + tok] = x[b].d;
    }
  }
}

Q512Fn q256_fn(DType t) { return best_simd_level() == SimdLevel::avx2 ? q256_table(t) : nullptr; }

}  // namespace rc::kernels

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
#include "avx2-util.h"

namespace rc::kernels {
namespace {

using namespace avx2;

inline int32_t ld4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void tile_q8_0(const Q512Args& a) {
  const int64_t nb = a.K / 32, rs = row_scratch(a.K);
  const BlockQ8_0* blk[kQ256Rows];
  const uint8_t* mag[kQ256Rows];
  const float* dw[kQ256Rows];
  for (int r = 0; r < kQ256Rows; ++r) {
    const int rr = std::min(r, a.rows - 1);
    blk[r] = reinterpret_cast<const BlockQ8_0*>(a.w + rr * a.w_stride);
    uint8_t* m = a.scratch + rr * rs;
    auto* d = reinterpret_cast<float*>(m + a.K);
    mag[r] = m;
    dw[r] = d;
    if (r != rr) continue;
    for (int64_t b = 0; b < nb; ++b) {
      const __m256i q = load32(blk[r][b].qs);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(m + 32 * b), _mm256_sign_epi8(q, q));
      d[b] = half_to_float(blk[r][b].d);
    }
  }
  const __m256i ones = _mm256_set1_epi16(1);
  const int64_t groups = (a.tokens + kL - 1) / kL;
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* xq = a.act + g * a.group_bytes;
    const auto* xd = reinterpret_cast<const float*>(xq + a.K * kL);
    // lanes[k][r]: the accumulator of blocks b = k mod 8, as the tile kernel.
    alignas(32) float lanes[8][kQ256Rows][kL];
    for (int k = 0; k < 8; ++k) {
      __m256 c[kQ256Rows];
      for (int r = 0; r < kQ256Rows; ++r) c[r] = _mm256_setzero_ps();
      for (int64_t b = k; b < nb; b += 8) {
        const uint8_t* xb = xq + 8 * b * kL * 4;
        const __m256 ad = _mm256_loadu_ps(xd + kL * b);
        for (int r = 0; r < kQ256Rows; ++r) {
          const uint8_t* w = reinterpret_cast<const uint8_t*>(blk[r][b].qs);
          const uint8_t* m = mag[r] + 32 * b;
          __m256i ia = _mm256_setzero_si256();
          for (int s = 0; s < 8; ++s) {
            const __m256i xs =
                _mm256_sign_epi8(load32(xb + s * kL * 4), _mm256_set1_epi32(ld4(w + 4 * s)));
            const __m256i p = _mm256_maddubs_epi16(_mm256_set1_epi32(ld4(m + 4 * s)), xs);
            ia = _mm256_add_epi32(ia, _mm256_madd_epi16(p, ones));
          }
          c[r] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(dw[r][b]), ad),
                                 _mm256_cvtepi32_ps(ia), c[r]);
        }
      }
      for (int r = 0; r < kQ256Rows; ++r) _mm256_store_ps(lanes[k][r], c[r]);
    }
    const int nt = int(std::min<int64_t>(kL, a.tokens - g * kL));
    for (int r = 0; r < a.rows; ++r) {
      auto L = [&](int k) { return _mm256_load_ps(lanes[k][r]); };
      // hsum's order: ((c0 + c4) + (c2 + c6)) + ((c1 + c5) + (c3 + c7)).
      const __m256 s0 = _mm256_add_ps(_mm256_add_ps(L(0), L(4)), _mm256_add_ps(L(2), L(6)));
      const __m256 s1 = _mm256_add_ps(_mm256_add_ps(L(1), L(5)), _mm256_add_ps(L(3), L(7)));
      alignas(32) float v[kL];
      _mm256_store_ps(v, _mm256_add_ps(s0, s1));
      const float bias = a.bias ? a.bias[r] : 0.0f;
      for (int t = 0; t < nt; ++t) a.y[(g * kL + t) * a.ldy + r] = v[t] + bias;
    }
  }
}

Q512Fn q256_table(DType t) { return t == DType::q8_0 ? tile_q8_0 : nullptr; }

}  // namespace
}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else

namespace rc::kernels {
namespace {
Q512Fn q256_table(DType) { return nullptr; }
}  // namespace
}  // namespace rc::kernels

#endif
