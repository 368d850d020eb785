// matvec.h kernels for the K-quants (Q4_K, Q5_K, Q6_K) on 512-bit
// registers: AVX-512 F/BW/VL + VNNI, with the numerical contract of
// matvec-avx512.cpp (each block's integer dot exact, then scaled and added
// in the tile kernels' fp32 order, qgemm.h). Rows go four at a time: each
// row's blocks are reduced to their terms first, in memory order, then the
// four rows' accumulator chains run side by side, each in its one order,
// so a row's result is the same bits as one row at a time and as in any
// prefill path.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "matvec.h"
#include "quant-blocks.h"

#include "simd-avx512-begin.h"

#if defined(RC_HAVE_AVX512_REGION)
#include "avx2-util.h"  // the region enables AVX2 too
#include "matvec-avx512-util.h"

namespace rc::kernels {
namespace {

using namespace avx512;

// The 6-bit scales and mins of four Q4_K / Q5_K blocks (q4k_scale_min
// layout), one per 128-bit lane, as bytes [sc0 .. sc7, m0 .. m7], from each
// block's first 16 bytes (d, dmin, then the 12 scale bytes s[0..11]):
// sc[j] = s[j] & 63 and m[j] = s[j+4] & 63 for j < 4; for j >= 4 the low
// four bits come from s[j+4] (sc: low nibble, m: high nibble) and the top
// two from bits 6-7 of s[j-4] (sc) or s[j] (m). In vector registers, so no
// value leaves for the integer unit and back.
inline __m512i lanes(__m128i v) { return _mm512_broadcast_i32x4(v); }
inline __m512i unpack_scales_k4(__m512i head) {
  const __m512i a = _mm512_shuffle_epi8(
      head, lanes(_mm_setr_epi8(4, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15)));
  const __m512i b = _mm512_shuffle_epi8(
      head, lanes(_mm_setr_epi8(-1, -1, -1, -1, 4, 5, 6, 7, -1, -1, -1, -1, 8, 9, 10, 11)));
  const __m512i low = _mm512_or_si512(
      _mm512_and_si512(
          a, lanes(_mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0))),
      _mm512_and_si512(_mm512_srli_epi16(a, 4),
                       lanes(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15))));
  // (b >> 6) << 4 per byte; b is zero where no top bits belong.
  return _mm512_or_si512(low, _mm512_and_si512(_mm512_srli_epi16(b, 2), _mm512_set1_epi8(0x30)));
}

// vpdpwssd's multiplier for pack_sums(plo, phi) of group g: in each 128-bit
// lane k, dwords 0-1 are plo's sub-block (4g for k < 2, 4g + 2 after) and
// dwords 2-3 phi's (4g + 1, 4g + 3), each scale byte of sv (every 128-bit
// lane a copy of one block's unpacked scales) widened to both 16-bit halves.
inline __m512i group_scales(__m512i sv, int g) {
  auto lane = [](int lo, int hi) {
    const char a = char(lo), b = char(hi), z = char(0x80);
    return _mm_setr_epi8(a, z, a, z, a, z, a, z, b, z, b, z, b, z, b, z);
  };
  const __m256i first = _mm256_broadcastsi128_si256(lane(4 * g, 4 * g + 1));
  const __m256i second = _mm256_broadcastsi128_si256(lane(4 * g + 2, 4 * g + 3));
  return _mm512_shuffle_epi8(sv, join(first, second));
}

// Two vpdpbusd results, whose lanes are each a sum of four products that
// fits in int16 (|sum| <= 4 * 31 * 128), as 16-bit values: per 128-bit
// lane plo's four then phi's four (vpackssdw, exact), so one vpdpwssd
// applies four sub-blocks' scales.
inline __m512i pack_sums(__m512i plo, __m512i phi) { return _mm512_packs_epi32(plo, phi); }

// One Q4_K / Q5_K block's sum over its 8 sub-blocks of sc[j] times the
// integer dot of the sub-block's quants with the activation quants x, in
// 16 int32 lanes; sv: the block's unpacked scales in every 128-bit lane.
// The activation's sub-blocks are stored 0 2 1 3 4 6 5 7, so the low and
// high nibbles of each 64 quant bytes meet contiguous 64-byte activation
// runs: the low nibbles' product holds sub-blocks 4g and 4g + 2 in lanes
// 0-7 / 8-15, the high nibbles' 4g + 1 and 4g + 3. Both are packed to 16
// bits and meet their scales in one vpdpwssd (an integer sum, so the same
// bits as a vpdpwssd per product).
// With T tokens the weight side (quants, scales) is formed once and meets
// each token's activation x[t] at its offset `off` into isum[t].
template <bool k5, int T, class Block>
inline void k45_scaled_isum(const Block& b, const int8_t* const x[], int64_t off, __m512i sv,
                            __m512i isum[]) {
  const __m512i m4 = _mm512_set1_epi8(0x0f);
  for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
  [[maybe_unused]] __m512i qh;
  if constexpr (k5) qh = _mm512_broadcast_i64x4(load32(b.qh));
  for (int g = 0; g < 2; ++g) {
    const __m512i q = load64(b.qs + 64 * g);
    __m512i lo = _mm512_and_si512(q, m4);
    __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
    if constexpr (k5) {
      // Sub-blocks 4g + {0, 2} (lo) and 4g + {1, 3} (hi): their qh bits.
      const __m512i bl =
          join(_mm256_set1_epi8(char(1 << (4 * g))), _mm256_set1_epi8(char(1 << (4 * g + 2))));
      const __m512i bh =
          join(_mm256_set1_epi8(char(1 << (4 * g + 1))), _mm256_set1_epi8(char(1 << (4 * g + 3))));
      const __m512i h16 = _mm512_set1_epi8(0x10);
      lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(qh, bl), lo, h16);
      hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(qh, bh), hi, h16);
    }
    const __m512i sc = group_scales(sv, g);
    for (int t = 0; t < T; ++t) {
      const int8_t* xt = x[t] + off + 128 * g;
      const __m512i plo = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, load64(xt));
      const __m512i phi = _mm512_dpbusd_epi32(_mm512_setzero_si512(), hi, load64(xt + 64));
      isum[t] = _mm512_dpwssd_epi32(isum[t], pack_sums(plo, phi), sc);
    }
  }
}

// Q4_K / Q5_K, four blocks per step: one 512-bit scale unpack, one d/dmin
// conversion and one mins unpack for all four. Each block's scaled
// integer sum and mins sum are reduced to exact integers; the row's one
// accumulator per token then takes them in the tile kernels' order
// (qgemm.h): acc += (d * ad) * isum, acc -= (dmin * ad) * msum, block by
// block, so decode gives the bits of every prefill path. The last step of
// a row whose block count is not a multiple of four reads zeros for the
// missing blocks' heads, scales and activation sums (masked loads) and
// skips them. Lane k of each term: block k of the four.
struct QuadTerms {
  __m128 d, dmin, isum, msum;  // d * ad, dmin * ad, and the two exact sums as fp32
};
// The terms of one row's four blocks from i on for T tokens (a[t]).
template <bool k5, bool kFull, int T, class Block>
inline void k45_terms(const Block* b, const MatvecAct* a, int64_t i, int n, QuadTerms out[]) {
  for (int l = 0; l < 4 * int(sizeof(Block)); l += 64)
    prefetch_l2(reinterpret_cast<const uint8_t*>(b) + l);
  auto head = [&](int k) {
    return kFull || k < n ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k))
                          : _mm_setzero_si128();
  };
  const __m512i heads =
      join(_mm256_set_m128i(head(1), head(0)), _mm256_set_m128i(head(3), head(2)));
  // d and dmin of the four blocks (the first two halves of each head).
  const __m256 wd = _mm256_cvtph_ps(_mm512_castsi512_si128(_mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), heads)));
  const __m128 d =
      _mm256_castps256_ps128(_mm256_permutexvar_ps(_mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0), wd));
  const __m128 dmin =
      _mm256_castps256_ps128(_mm256_permutexvar_ps(_mm256_setr_epi32(1, 3, 5, 7, 0, 0, 0, 0), wd));
  const __m512i scm = unpack_scales_k4(heads);
  // Mins: 8 per block as int16 against the activation's sub-block sums;
  // 128-bit lane k holds block k's four pair sums.
  const __m512i mins = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(
      _mm512_permutexvar_epi64(_mm512_setr_epi64(1, 3, 5, 7, 1, 3, 5, 7), scm)));
  for (int t = 0; t < T; ++t) {
    const __m128 ad =
        kFull ? _mm_loadu_ps(a[t].d + i) : _mm_maskz_loadu_ps(__mmask8((1u << n) - 1), a[t].d + i);
    out[t].d = _mm_mul_ps(d, ad);
    out[t].dmin = _mm_mul_ps(dmin, ad);
    const __m512i bs = kFull ? load64(a[t].bsum + 8 * i)
                             : _mm512_maskz_loadu_epi16(__mmask32((uint64_t(1) << (8 * n)) - 1),
                                                        a[t].bsum + 8 * i);
    __m512i mp = _mm512_madd_epi16(mins, bs);
    mp = _mm512_add_epi32(mp, _mm512_shuffle_epi32(mp, _MM_PERM_BADC));
    mp = _mm512_add_epi32(mp, _mm512_shuffle_epi32(mp, _MM_PERM_CDAB));
    out[t].msum = _mm_cvtepi32_ps(_mm512_castsi512_si128(_mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), mp)));
  }
  const int8_t* x[T];
  for (int t = 0; t < T; ++t) x[t] = a[t].qs + 256 * i;
  __m512i isums[4][T];
  for (int k = 0; k < 4; ++k) {
    if (!kFull && k >= n) {
      for (int t = 0; t < T; ++t) isums[k][t] = _mm512_setzero_si512();
      continue;
    }
    const __m512i sv = _mm512_permutexvar_epi64(
        _mm512_set_epi64(2 * k + 1, 2 * k, 2 * k + 1, 2 * k, 2 * k + 1, 2 * k, 2 * k + 1, 2 * k),
        scm);
    k45_scaled_isum<k5, T>(b[k], x, 256 * k, sv, isums[k]);
  }
  for (int t = 0; t < T; ++t) {
    const __m512i v[4] = {isums[0][t], isums[1][t], isums[2][t], isums[3][t]};
    out[t].isum = lane_sums4(v);
  }
}

// One row's accumulator takes the quad's n blocks in order.
inline float k45_add(const QuadTerms& t, int n, float acc) {
  alignas(16) float d[4], dmin[4], isum[4], msum[4];
  _mm_store_ps(d, t.d);
  _mm_store_ps(dmin, t.dmin);
  _mm_store_ps(isum, t.isum);
  _mm_store_ps(msum, t.msum);
  for (int k = 0; k < n; ++k) {
    acc = std::fma(d[k], isum[k], acc);
    acc = std::fma(-dmin[k], msum[k], acc);
  }
  return acc;
}

// Four rows: lane r of acc is row r's accumulator, and each lane takes the
// same fused multiply-adds in the same order as k45_add (a lane of vfmadd
// and vfnmadd rounds as std::fma does), so the four chains run side by side
// with the same bits as one row at a time.
inline __m128 k45_add4(const QuadTerms* const t[4], int n, __m128 acc) {
  __m128 d[4] = {t[0]->d, t[1]->d, t[2]->d, t[3]->d};
  __m128 dmin[4] = {t[0]->dmin, t[1]->dmin, t[2]->dmin, t[3]->dmin};
  __m128 isum[4] = {t[0]->isum, t[1]->isum, t[2]->isum, t[3]->isum};
  __m128 msum[4] = {t[0]->msum, t[1]->msum, t[2]->msum, t[3]->msum};
  _MM_TRANSPOSE4_PS(d[0], d[1], d[2], d[3]);
  _MM_TRANSPOSE4_PS(dmin[0], dmin[1], dmin[2], dmin[3]);
  _MM_TRANSPOSE4_PS(isum[0], isum[1], isum[2], isum[3]);
  _MM_TRANSPOSE4_PS(msum[0], msum[1], msum[2], msum[3]);
  for (int k = 0; k < n; ++k) {
    acc = _mm_fmadd_ps(d[k], isum[k], acc);
    acc = _mm_fnmadd_ps(dmin[k], msum[k], acc);
  }
  return acc;
}

template <bool k5>
using K45Block = std::conditional_t<k5, BlockQ5_K, BlockQ4_K>;

// One row against T tokens: y[t * ldy].
template <bool k5, int T>
void dot_k45(const uint8_t* w, const MatvecAct* a, float* y, int64_t ldy) {
  const auto* blocks = reinterpret_cast<const K45Block<k5>*>(w);
  const int64_t nb = a[0].K / 256;
  float acc[T] = {};
  QuadTerms q[T];
  for (int64_t i = 0; i < nb; i += 4) {
    const int n = int(std::min<int64_t>(4, nb - i));
    if (n == 4) {
      k45_terms<k5, true, T>(blocks + i, a, i, 4, q);
    } else {
      k45_terms<k5, false, T>(blocks + i, a, i, n, q);
    }
    for (int t = 0; t < T; ++t) acc[t] = k45_add(q[t], n, acc[t]);
  }
  for (int t = 0; t < T; ++t) y[t * ldy] = acc[t];
}

// Four adjacent rows against T tokens: each row's quads are reduced to
// their terms first, row after row, so the weights stream in memory order
// and no quad waits on the one before; then the four rows' accumulator
// chains run side by side (k45_add4), each keeping its one order. Reading
// the four rows interleaved instead streams from DRAM at half the rate on
// one core. A row's blocks go in runs of kRunQuads / T quads (the terms
// stay in L1).
constexpr int64_t kRunQuads = 16;
template <bool k5, int T>
void dot4_k45(const uint8_t* w, int64_t stride, const MatvecAct* a, float* y, int64_t ldy) {
  constexpr int64_t run = std::max<int64_t>(1, kRunQuads / T);
  const int64_t nb = a[0].K / 256;
  __m128 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm_setzero_ps();
  QuadTerms terms[4][run][T];
  for (int64_t i0 = 0; i0 < nb; i0 += 4 * run) {
    const int64_t i1 = std::min(nb, i0 + 4 * run);
    for (int r = 0; r < 4; ++r) {
      const auto* b = reinterpret_cast<const K45Block<k5>*>(w + r * stride);
      int64_t i = i0, q = 0;
      for (; i + 4 <= i1; i += 4, ++q) k45_terms<k5, true, T>(b + i, a, i, 4, terms[r][q]);
      if (i < i1) k45_terms<k5, false, T>(b + i, a, i, int(i1 - i), terms[r][q]);
    }
    for (int64_t i = i0, q = 0; i < i1; i += 4, ++q) {
      const int n = int(std::min<int64_t>(4, i1 - i));
      for (int t = 0; t < T; ++t) {
        const QuadTerms* quad[4] = {&terms[0][q][t], &terms[1][q][t], &terms[2][q][t],
                                    &terms[3][q][t]};
        acc[t] = k45_add4(quad, n, acc[t]);
      }
    }
  }
  for (int t = 0; t < T; ++t) _mm_storeu_ps(y + t * ldy, acc[t]);
}

template <bool k5, int T>
void rows_k45(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct* a, float* y,
              int64_t ldy) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) dot4_k45<k5, T>(w + r * stride, stride, a, y + r, ldy);
  for (; r < rows; ++r) dot_k45<k5, T>(w + r * stride, a, y + r, ldy);
}

// Q6_K: per 128-element half, the low nibbles of ql[0..64) with qh bits
// 0-1 / 2-3 are elements 0-63, the high nibbles with bits 4-5 / 6-7
// elements 64-127, all in natural order; quants 0..63 carry the offset 32,
// which ns4 removes, so each lane of a product is a sum of four
// (q - 32) * x, |sum| <= 4 * 32 * 128: both products packed to 16 bits
// (pack_sums) meet their 16-element sub-blocks' scales in one vpdpwssd.
// Sub-block j of the half's products: lanes 4j..4j+3 of the low nibbles'
// (j = 0..3) or of the high nibbles' (j = 4..7); packed, 128-bit lane k
// holds sub-block k in dwords 0-1 and sub-block 4 + k in dwords 2-3.
alignas(64) constexpr int16_t kQ6ScaleIndex[2][32] = {
    {0, 0, 0, 0, 4, 4, 4, 4, 1, 1, 1, 1, 5, 5, 5, 5,
     2, 2, 2, 2, 6, 6, 6, 6, 3, 3, 3, 3, 7, 7, 7, 7},
    {8,  8,  8,  8,  12, 12, 12, 12, 9,  9,  9,  9,  13, 13, 13, 13,
     10, 10, 10, 10, 14, 14, 14, 14, 11, 11, 11, 11, 15, 15, 15, 15},
};

// One Q6_K block's scaled integer sums (offset removed) in 16 int32 lanes
// for T tokens: block j of a[t] into isum[t], the weight side formed once.
template <int T>
inline void q6k_isum(const BlockQ6_K& b, const MatvecAct* a, int64_t j, const __m512i index[2],
                     __m512i isum[]) {
  const __m512i m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
  const __m512i sh_lo = join(_mm256_set1_epi16(4), _mm256_set1_epi16(2));
  const __m512i sh_hi = join(_mm256_set1_epi16(0), _mm256_set1_epi16(2));
  // The 16 int8 scales as int16 (words 0-15).
  const __m512i sc16 = _mm512_castsi256_si512(
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales))));
  for (int l = 0; l < int(sizeof(BlockQ6_K)); l += 64)
    prefetch_l2(reinterpret_cast<const uint8_t*>(&b) + l);
  for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h) {
    const __m512i ql = load64(b.ql + 64 * h);
    const __m512i qh = _mm512_broadcast_i64x4(load32(b.qh + 32 * h));
    const __m512i lo = _mm512_or_si512(_mm512_and_si512(ql, m4),
                                       _mm512_and_si512(_mm512_sllv_epi16(qh, sh_lo), m30));
    const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                       _mm512_and_si512(_mm512_srlv_epi16(qh, sh_hi), m30));
    const __m512i sc = _mm512_permutexvar_epi16(index[h], sc16);
    for (int t = 0; t < T; ++t) {
      const int8_t* x = a[t].qs + 256 * j + 128 * h;
      const int32_t* ns4 = a[t].ns4 + 64 * j + 32 * h;
      const __m512i plo = _mm512_dpbusd_epi32(_mm512_loadu_si512(ns4), lo, load64(x));
      const __m512i phi = _mm512_dpbusd_epi32(_mm512_loadu_si512(ns4 + 16), hi, load64(x + 64));
      isum[t] = _mm512_dpwssd_epi32(isum[t], pack_sums(plo, phi), sc);
    }
  }
}

// Four blocks' scales (d * ad) and exact integer sums as fp32 for T
// tokens, lane k block k; blocks past n are zeros.
template <int T>
inline void q6k_terms(const BlockQ6_K* b, const MatvecAct* a, int64_t i, int n,
                      const __m512i index[2], __m128 scale[], __m128 isum[]) {
  __m512i isums[4][T];
  alignas(16) float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < 4; ++k) {
    if (k < n) {
      q6k_isum<T>(b[k], a, i + k, index, isums[k]);
      d[k] = avx2::half_to_float(b[k].d);
    } else {
      for (int t = 0; t < T; ++t) isums[k][t] = _mm512_setzero_si512();
    }
  }
  for (int t = 0; t < T; ++t) {
    scale[t] = _mm_mul_ps(_mm_load_ps(d), _mm_maskz_loadu_ps(__mmask8((1u << n) - 1), a[t].d + i));
    const __m512i v[4] = {isums[0][t], isums[1][t], isums[2][t], isums[3][t]};
    isum[t] = lane_sums4(v);
  }
}

// One row against T tokens (y[t * ldy]): one accumulator per token takes
// the blocks in the tile kernels' order (qgemm.h).
template <int T>
void dot_q6k(const uint8_t* w, const MatvecAct* a, const __m512i index[2], float* y, int64_t ldy) {
  const auto* b = reinterpret_cast<const BlockQ6_K*>(w);
  const int64_t nb = a[0].K / 256;
  float acc[T] = {};
  for (int64_t i = 0; i < nb; i += 4) {
    const int n = int(std::min<int64_t>(4, nb - i));
    __m128 scale[T], isum[T];
    q6k_terms<T>(b + i, a, i, n, index, scale, isum);
    for (int t = 0; t < T; ++t) {
      alignas(16) float s[4], v[4];
      _mm_store_ps(s, scale[t]);
      _mm_store_ps(v, isum[t]);
      for (int k = 0; k < n; ++k) acc[t] = std::fma(s[k], v[k], acc[t]);
    }
  }
  for (int t = 0; t < T; ++t) y[t * ldy] = acc[t];
}

// Four adjacent rows against T tokens, as dot4_k45: each row's terms
// first, in memory order, then the four chains side by side (lane r: row r).
template <int T>
void dot4_q6k(const uint8_t* w, int64_t stride, const MatvecAct* a, const __m512i index[2],
              float* y, int64_t ldy) {
  constexpr int64_t run = std::max<int64_t>(1, kRunQuads / T);
  const int64_t nb = a[0].K / 256;
  __m128 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm_setzero_ps();
  __m128 scale[4][run][T], isum[4][run][T];
  for (int64_t i0 = 0; i0 < nb; i0 += 4 * run) {
    const int64_t i1 = std::min(nb, i0 + 4 * run);
    for (int r = 0; r < 4; ++r) {
      const auto* b = reinterpret_cast<const BlockQ6_K*>(w + r * stride);
      for (int64_t i = i0, q = 0; i < i1; i += 4, ++q) {
        q6k_terms<T>(b + i, a, i, int(std::min<int64_t>(4, i1 - i)), index, scale[r][q],
                     isum[r][q]);
      }
    }
    for (int64_t i = i0, q = 0; i < i1; i += 4, ++q) {
      const int n = int(std::min<int64_t>(4, i1 - i));
      for (int t = 0; t < T; ++t) {
        __m128 sc[4] = {scale[0][q][t], scale[1][q][t], scale[2][q][t], scale[3][q][t]};
        __m128 v[4] = {isum[0][q][t], isum[1][q][t], isum[2][q][t], isum[3][q][t]};
        _MM_TRANSPOSE4_PS(sc[0], sc[1], sc[2], sc[3]);
        _MM_TRANSPOSE4_PS(v[0], v[1], v[2], v[3]);
        for (int k = 0; k < n; ++k) acc[t] = _mm_fmadd_ps(sc[k], v[k], acc[t]);
      }
    }
  }
  for (int t = 0; t < T; ++t) _mm_storeu_ps(y + t * ldy, acc[t]);
}

template <int T>
void rows_q6k(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct* a, float* y,
              int64_t ldy) {
  const __m512i index[2] = {load64(kQ6ScaleIndex[0]), load64(kQ6ScaleIndex[1])};
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) dot4_q6k<T>(w + r * stride, stride, a, index, y + r, ldy);
  for (; r < rows; ++r) dot_q6k<T>(w + r * stride, a, index, y + r, ldy);
}

// The row kernels for T = 1 .. kMatvecMaxTokens, by token count.
template <template <int> class Rows, int... Ts>
MatvecManyFn pick_tokens(int tokens, std::integer_sequence<int, Ts...>) {
  MatvecManyFn fn = nullptr;
  ((fn = tokens == Ts + 1 ? Rows<Ts + 1>::fn : fn), ...);
  return fn;
}
template <bool k5>
struct K45Rows {
  template <int T>
  struct At {
    static constexpr MatvecManyFn fn = rows_k45<k5, T>;
  };
};
template <int T>
struct Q6kRows {
  static constexpr MatvecManyFn fn = rows_q6k<T>;
};

void matvec_k4(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  rows_k45<false, 1>(w, stride, rows, &a, y, 0);
}
void matvec_k5(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  rows_k45<true, 1>(w, stride, rows, &a, y, 0);
}
void matvec_q6k(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  rows_q6k<1>(w, stride, rows, &a, y, 0);
}

}  // namespace

MatvecFn matvec_kquant_avx512(DType t) {
  switch (t) {
    case DType::q4_k:
      return matvec_k4;
    case DType::q5_k:
      return matvec_k5;
    case DType::q6_k:
      return matvec_q6k;
    default:
      return nullptr;
  }
}

MatvecManyFn matvec_many_kquant_avx512(DType t, int tokens) {
  if (tokens < 1 || tokens > kMatvecMaxTokens) return nullptr;
  const auto counts = std::make_integer_sequence<int, kMatvecMaxTokens>();
  switch (t) {
    case DType::q4_k:
      return pick_tokens<K45Rows<false>::At>(tokens, counts);
    case DType::q5_k:
      return pick_tokens<K45Rows<true>::At>(tokens, counts);
    case DType::q6_k:
      return pick_tokens<Q6kRows>(tokens, counts);
    default:
      return nullptr;
  }
}

}  // namespace rc::kernels

#include "simd-avx512-end.h"

#else

namespace rc::kernels {
MatvecFn matvec_kquant_avx512(DType) { return nullptr; }
MatvecManyFn matvec_many_kquant_avx512(DType, int) { return nullptr; }
}  // namespace rc::kernels

#endif
