// The 512-bit token-lane prefill kernels of qgemm-avx512.h.
#include "qgemm-avx512.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "act-quant.h"
#include "fp16.h"
#include "lane-pack.h"
#include "qgemm.h"
#include "quant-blocks.h"

namespace rc::kernels {

namespace {

constexpr int64_t kL = kQ512Tokens;

Q512Fn q512_table(DType t);  // the kernels of the AVX-512 region below

constexpr LaneFormat kFormat{int(kL), true, false};

// Per weight row of a tile: K-quants as lane-kquant-rows.inc decodes them;
// Q8_0 -128 * (sum of the block's quants) as int32 [K/32], then d as fp32
// [K/32].
int64_t row_scratch(DType t, int64_t K) {
  return t == DType::q8_0 ? (K / 32 * 8 + 63) / 64 * 64 : kquant_row_bytes(t, K);
}

}  // namespace

bool float_type(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32; }

int64_t q512_group_bytes(DType t, int64_t K) {
  if (float_type(t)) return h512_group_bytes(K);
  return lane_group_bytes(kFormat, t, K);
}

int q512_tile_rows(DType t) { return float_type(t) ? kH512Rows : kQ512Rows; }

int64_t q512_scratch_bytes(DType t, int64_t K) {
  return float_type(t) ? 0 : kQ512Rows * row_scratch(t, K);  // float rows are read in place
}

void q512_pack_acts(DType t, const uint8_t* act, int64_t act_stride, int tokens, int64_t K,
                    uint8_t* dst) {
  if (float_type(t)) return h512_pack_acts(act, act_stride, tokens, K, dst);
  lane_pack_acts(kFormat, t, act, act_stride, tokens, K, dst);
}

}  // namespace rc::kernels

// The region below is compiled for AVX-512 (F, BW, VL, VNNI); q512_fn hands
// its kernels out only when cpu_has_vnni(). Only file-local code lives in it.
#include "simd-avx512-begin.h"

#if defined(RC_HAVE_AVX512_REGION)
namespace rc::kernels {
namespace {

inline float h2f(uint16_t h) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(int(h)))); }
inline __m256i ld32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline int32_t ld4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Prefetches bytes [b0, b1) of each of the kQ512Rows rows of the next tile.
inline void prefetch_next(const Q512Args& a, int64_t b0, int64_t b1) {
  if (!a.next_w) return;
  for (int r = 0; r < kQ512Rows; ++r) {
    const char* row = reinterpret_cast<const char*>(a.next_w + r * a.w_stride);
    for (int64_t b = b0; b < b1; b += 64) _mm_prefetch(row + b, _MM_HINT_T0);
  }
}

#include "lane-kquant-rows.inc"

// Results of one row for the tokens of group g: y = acc + bias, as the
// AVX2 kernels store them.
inline void store_row(const Q512Args& a, int64_t g, int r, __m512 c) {
  alignas(64) float v[kL];
  _mm512_store_ps(v, c);
  const int n = int(std::min<int64_t>(kL, a.tokens - g * kL));
  const float b = a.bias ? a.bias[r] : 0.0f;
  for (int t = 0; t < n; ++t) a.y[(g * kL + t) * a.ldy + r] = v[t] + b;
}

// ---- K-quants: per super-block, the exact integer sum_j sc_j * dot_j (Q6_K:
// with the -32 offset folded into each 16-element dot) per (row, token). ----
template <bool kQ6>
void kq_group(const Q512Args& a, int64_t bbytes, bool pf, const KRow* rows, const uint8_t* xg,
              int64_t K, __m512 c[kQ512Rows]) {
  constexpr int kSub = kQ6 ? 16 : 8;      // sub-blocks per super-block
  constexpr int kSteps = 256 / kSub / 4;  // 4-byte steps per sub-block
  const auto* xq = xg;
  const auto* xd = reinterpret_cast<const float*>(xg + K * kL);
  const auto* xx = reinterpret_cast<const int32_t*>(xg + K * kL + K / 256 * kL * 4);
  for (int64_t i = 0; i < K / 256; ++i) {
    if (pf) prefetch_next(a, i * bbytes, (i + 1) * bbytes);
    __m512i is[kQ512Rows];
    for (int r = 0; r < kQ512Rows; ++r) is[r] = _mm512_setzero_si512();
    for (int j = 0; j < kSub; ++j) {
      const int64_t e0 = 256 * i + j * (256 / kSub);
      const __m512i init =
          kQ6 ? _mm512_loadu_si512(xx + (kSub * i + j) * kL) : _mm512_setzero_si512();
      __m512i ia[kQ512Rows];
      for (int r = 0; r < kQ512Rows; ++r) ia[r] = init;
      for (int s = 0; s < kSteps; ++s) {
        const __m512i xv = _mm512_loadu_si512(xq + (e0 + 4 * s) * kL);
        for (int r = 0; r < kQ512Rows; ++r) {
          ia[r] = _mm512_dpbusd_epi32(ia[r], _mm512_set1_epi32(ld4(rows[r].q + e0 + 4 * s)), xv);
        }
      }
      for (int r = 0; r < kQ512Rows; ++r) {
        is[r] = _mm512_add_epi32(
            is[r], _mm512_mullo_epi32(ia[r], _mm512_set1_epi32(rows[r].sc[kSub * i + j])));
      }
    }
    const __m512 ad = _mm512_loadu_ps(xd + kL * i);
    for (int r = 0; r < kQ512Rows; ++r) {
      c[r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(rows[r].d[i]), ad),
                             _mm512_cvtepi32_ps(is[r]), c[r]);
    }
    if constexpr (!kQ6) {
      __m512i ms[kQ512Rows];
      for (int r = 0; r < kQ512Rows; ++r) ms[r] = _mm512_setzero_si512();
      for (int p = 0; p < 4; ++p) {
        const __m512i bs = _mm512_loadu_si512(xx + (4 * i + p) * kL);
        for (int r = 0; r < kQ512Rows; ++r) {
          ms[r] = _mm512_dpwssd_epi32(ms[r], _mm512_set1_epi32(rows[r].mp[4 * i + p]), bs);
        }
      }
      for (int r = 0; r < kQ512Rows; ++r) {
        c[r] = _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_set1_ps(rows[r].dmin[i]), ad),
                                _mm512_cvtepi32_ps(ms[r]), c[r]);
      }
    }
  }
}

template <DType T>
void tile_kq(const Q512Args& a) {
  KRow rows[kQ512Rows];
  decode_kq_tile<T, kQ512Rows>(a, rows);
  const int64_t groups = (a.tokens + kL - 1) / kL;
  for (int64_t g = 0; g < groups; ++g) {
    __m512 c[kQ512Rows];
    for (int r = 0; r < kQ512Rows; ++r) c[r] = _mm512_setzero_ps();
    const int64_t bb = T == DType::q6_k   ? int64_t(sizeof(BlockQ6_K))
                       : T == DType::q5_k ? int64_t(sizeof(BlockQ5_K))
                                          : int64_t(sizeof(BlockQ4_K));
    kq_group<T == DType::q6_k>(a, bb, g == 0, rows, a.act + g * a.group_bytes, a.K, c);
    for (int r = 0; r < a.rows; ++r) store_row(a, g, r, c[r]);
  }
}

// ---- Q8_0: activations offset to unsigned bytes, the offset taken back
// through -128 * (sum of the weight block). ----
inline int32_t q8_neg_sum(const BlockQ8_0& b) {
  // sad of (q + 128) against zero: four partial sums of unsigned bytes.
  const __m256i u = _mm256_xor_si256(ld32(b.qs), _mm256_set1_epi8(char(0x80)));
  const __m256i s = _mm256_sad_epu8(u, _mm256_setzero_si256());
  __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  h = _mm_add_epi64(h, _mm_unpackhi_epi64(h, h));
  return -128 * (_mm_cvtsi128_si32(h) - 32 * 128);
}

void tile_q8_0(const Q512Args& a) {
  const int64_t nb = a.K / 32, rs = row_scratch(DType::q8_0, a.K);
  const BlockQ8_0* blk[kQ512Rows];
  const int32_t* ns[kQ512Rows];
  const float* dw[kQ512Rows];
  for (int r = 0; r < kQ512Rows; ++r) {
    const int rr = std::min(r, a.rows - 1);
    blk[r] = reinterpret_cast<const BlockQ8_0*>(a.w + rr * a.w_stride);
    auto* n = reinterpret_cast<int32_t*>(a.scratch + rr * rs);
    auto* d = reinterpret_cast<float*>(n + nb);
    ns[r] = n;
    dw[r] = d;
    if (r != rr) continue;
    for (int64_t b = 0; b < nb; ++b) {
      n[b] = q8_neg_sum(blk[r][b]);
      d[b] = h2f(blk[r][b].d);
    }
  }
  const int64_t groups = (a.tokens + kL - 1) / kL;
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* xq = a.act + g * a.group_bytes;
    const auto* xd = reinterpret_cast<const float*>(xq + a.K * kL);
    // lanes[k][r]: the accumulator of blocks b = k mod 8, as the AVX2 kernel.
    alignas(64) float lanes[8][kQ512Rows][kL];
    for (int k = 0; k < 8; ++k) {
      __m512 c[kQ512Rows];
      for (int r = 0; r < kQ512Rows; ++r) c[r] = _mm512_setzero_ps();
      for (int64_t b = k; b < nb; b += 8) {
        __m512i ia[kQ512Rows];
        for (int r = 0; r < kQ512Rows; ++r) ia[r] = _mm512_set1_epi32(ns[r][b]);
        for (int s = 0; s < 8; ++s) {
          const __m512i xv = _mm512_loadu_si512(xq + (8 * b + s) * kL * 4);
          for (int r = 0; r < kQ512Rows; ++r) {
            ia[r] = _mm512_dpbusd_epi32(ia[r], xv, _mm512_set1_epi32(ld4(blk[r][b].qs + 4 * s)));
          }
        }
        if (g == 0) prefetch_next(a, b * 34, b * 34 + 34);
        const __m512 ad = _mm512_loadu_ps(xd + kL * b);
        for (int r = 0; r < kQ512Rows; ++r) {
          c[r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(dw[r][b]), ad),
                                 _mm512_cvtepi32_ps(ia[r]), c[r]);
        }
      }
      for (int r = 0; r < kQ512Rows; ++r) _mm512_store_ps(lanes[k][r], c[r]);
    }
    for (int r = 0; r < a.rows; ++r) {
      auto L = [&](int k) { return _mm512_load_ps(lanes[k][r]); };
      // hsum's order: ((c0 + c4) + (c2 + c6)) + ((c1 + c5) + (c3 + c7)).
      const __m512 s0 = _mm512_add_ps(_mm512_add_ps(L(0), L(4)), _mm512_add_ps(L(2), L(6)));
      const __m512 s1 = _mm512_add_ps(_mm512_add_ps(L(1), L(5)), _mm512_add_ps(L(3), L(7)));
      store_row(a, g, r, _mm512_add_ps(s0, s1));
    }
  }
}

Q512Fn q512_table(DType t) {
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

#include "simd-avx512-end.h"

#else

namespace rc::kernels {
namespace {
Q512Fn q512_table(DType) { return nullptr; }
}  // namespace
}  // namespace rc::kernels

#endif

namespace rc::kernels {

Q512Fn q512_fn(DType t) {
  if (!cpu_has_vnni()) return nullptr;
  return float_type(t) ? h512_table(t) : q512_table(t);
}

}  // namespace rc::kernels
