// The 256-bit token-lane prefill kernels of qgemm-avx2-lanes.h.
#include "qgemm-avx2-lanes.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "act-quant.h"
#include "lane-pack.h"
#include "quant-blocks.h"
#include "simd-level.h"

namespace rc::kernels {

namespace {

constexpr int64_t kL = kQ256Tokens;

Q512Fn q256_table(DType t);  // the kernels of the AVX2 region below

// Q8_0 quants as they are (signed); Q6_K offsets as int16 pairs of sums.
constexpr LaneFormat kFormat{int(kL), false, true};

// Per weight row of a tile: K-quants as lane-kquant-rows.inc decodes them;
// Q8_0 the magnitudes of the quants [K] (bytes, |-128| read as 128), then d
// as fp32 [K/32].
int64_t row_scratch(DType t, int64_t K) {
  return t == DType::q8_0 ? (K + K / 32 * 4 + 63) / 64 * 64 : kquant_row_bytes(t, K);
}

}  // namespace

int64_t q256_group_bytes(DType t, int64_t K) { return lane_group_bytes(kFormat, t, K); }

int64_t q256_scratch_bytes(DType t, int64_t K) { return kQ256Rows * row_scratch(t, K); }

void q256_pack_acts(DType t, const uint8_t* act, int64_t act_stride, int tokens, int64_t K,
                    uint8_t* dst) {
  lane_pack_acts(kFormat, t, act, act_stride, tokens, K, dst);
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
inline float h2f(uint16_t h) { return half_to_float(h); }
inline __m256i ld32(const void* p) { return load32(p); }

#include "lane-kquant-rows.inc"

// y = the lanes of c + bias for the tokens of group g.
inline void store_row(const Q512Args& a, int64_t g, int r, __m256 c) {
  alignas(32) float v[kL];
  _mm256_store_ps(v, c);
  const int n = int(std::min<int64_t>(kL, a.tokens - g * kL));
  const float b = a.bias ? a.bias[r] : 0.0f;
  for (int t = 0; t < n; ++t) a.y[(g * kL + t) * a.ldy + r] = v[t] + b;
}

// ---- K-quants: per super-block, the exact integer sum_j sc_j * dot_j per
// (row, token). maddubs forms 16-bit pair sums (quant * activation, two
// elements); kFlush of them add up in 16 bits without overflow before a
// madd multiplies them by the sub-block scale into 32 bits: |x| <= 127, so
// a pair is at most 2 * 127 * 15 (Q4_K), 31 (Q5_K) or 63 (Q6_K). ----
template <DType T>
void kq_group(const KRow* rows, const uint8_t* xg, int64_t K, __m256 c[kQ256Rows]) {
  constexpr bool kQ6 = T == DType::q6_k;
  constexpr int kSub = kQ6 ? 16 : 8;      // sub-blocks per super-block
  constexpr int kSteps = 256 / kSub / 4;  // 4-byte steps per sub-block
  constexpr int kFlush = T == DType::q4_k ? 8 : T == DType::q5_k ? 4 : 2;
  static_assert(kFlush * 2 * 127 * (T == DType::q4_k ? 15 : T == DType::q5_k ? 31 : 63) <= 32767);
  const auto* xd = reinterpret_cast<const float*>(xg + K * kL);
  const auto* xx = reinterpret_cast<const int32_t*>(xg + K * kL + K / 256 * kL * 4);
  for (int64_t i = 0; i < K / 256; ++i) {
    const __m256 ad = _mm256_loadu_ps(xd + kL * i);
    for (int r = 0; r < kQ256Rows; ++r) {
      const KRow& w = rows[r];
      __m256i is = _mm256_setzero_si256();
      for (int j = 0; j < kSub; ++j) {
        const int64_t e0 = 256 * i + j * (256 / kSub);
        const __m256i sc = _mm256_set1_epi16(short(w.sc[kSub * i + j]));
        for (int s0 = 0; s0 < kSteps; s0 += kFlush) {
          __m256i p = _mm256_setzero_si256();
          for (int s = s0; s < s0 + kFlush; ++s) {
            const int64_t e = e0 + 4 * s;
            p = _mm256_add_epi16(
                p, _mm256_maddubs_epi16(_mm256_set1_epi32(ld4(w.q + e)), ld32(xg + e * kL)));
          }
          is = _mm256_add_epi32(is, _mm256_madd_epi16(p, sc));
        }
      }
      if constexpr (kQ6) {
        // The -32 offset: 32 * sum_c sc_c * (sum of sub-block c's activations).
        __m256i off = _mm256_setzero_si256();
        for (int p = 0; p < 8; ++p) {
          const int32_t* sp = w.sc + 16 * i + 2 * p;
          const uint32_t pair = uint16_t(sp[0]) | (uint32_t(uint16_t(sp[1])) << 16);
          off = _mm256_add_epi32(off, _mm256_madd_epi16(_mm256_set1_epi32(int32_t(pair)),
                                                        ld32(xx + (8 * i + p) * kL)));
        }
        is = _mm256_sub_epi32(is, _mm256_slli_epi32(off, 5));
      }
      c[r] =
          _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(w.d[i]), ad), _mm256_cvtepi32_ps(is), c[r]);
      if constexpr (!kQ6) {
        __m256i ms = _mm256_setzero_si256();
        for (int p = 0; p < 4; ++p) {
          ms = _mm256_add_epi32(ms, _mm256_madd_epi16(_mm256_set1_epi32(w.mp[4 * i + p]),
                                                      ld32(xx + (4 * i + p) * kL)));
        }
        c[r] = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_set1_ps(w.dmin[i]), ad),
                                _mm256_cvtepi32_ps(ms), c[r]);
      }
    }
  }
}

template <DType T>
void tile_kq(const Q512Args& a) {
  KRow rows[kQ256Rows];
  decode_kq_tile<T, kQ256Rows>(a, rows);
  const int64_t groups = (a.tokens + kL - 1) / kL;
  for (int64_t g = 0; g < groups; ++g) {
    __m256 c[kQ256Rows];
    for (int r = 0; r < kQ256Rows; ++r) c[r] = _mm256_setzero_ps();
    kq_group<T>(rows, a.act + g * a.group_bytes, a.K, c);
    for (int r = 0; r < a.rows; ++r) store_row(a, g, r, c[r]);
  }
}

void tile_q8_0(const Q512Args& a) {
  const int64_t nb = a.K / 32, rs = row_scratch(DType::q8_0, a.K);
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
    for (int r = 0; r < a.rows; ++r) {
      auto L = [&](int k) { return _mm256_load_ps(lanes[k][r]); };
      // hsum's order: ((c0 + c4) + (c2 + c6)) + ((c1 + c5) + (c3 + c7)).
      const __m256 s0 = _mm256_add_ps(_mm256_add_ps(L(0), L(4)), _mm256_add_ps(L(2), L(6)));
      const __m256 s1 = _mm256_add_ps(_mm256_add_ps(L(1), L(5)), _mm256_add_ps(L(3), L(7)));
      store_row(a, g, r, _mm256_add_ps(s0, s1));
    }
  }
}

Q512Fn q256_table(DType t) {
  switch (t) {
    case DType::q8_0:
      return tile_q8_0;
    case DType::q4_k:
      return tile_kq<DType::q4_k>;
    case DType::q5_k:
      return tile_kq<DType::q5_k>;
    case DType::q6_k:
      return tile_kq<DType::q6_k>;
    default:
      return nullptr;
  }
}

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
