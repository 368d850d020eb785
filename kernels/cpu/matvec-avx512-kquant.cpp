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
template <bool k5, class Block>
inline __m512i k45_scaled_isum(const Block& b, const int8_t* x, __m512i sv) {
  const __m512i m4 = _mm512_set1_epi8(0x0f);
  __m512i isum = _mm512_setzero_si512();
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
    const __m512i plo = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, load64(x + 128 * g));
    const __m512i phi = _mm512_dpbusd_epi32(_mm512_setzero_si512(), hi, load64(x + 128 * g + 64));
    isum = _mm512_dpwssd_epi32(isum, pack_sums(plo, phi), group_scales(sv, g));
  }
  return isum;
}

// Q4_K / Q5_K, four blocks per step: one 512-bit scale unpack, one d/dmin
// conversion and one mins product for all four. Each block's scaled
// integer sum and mins sum are reduced to exact integers; the row's one
// accumulator then takes them in the tile kernels' order (qgemm.h):
// acc += (d * ad) * isum, acc -= (dmin * ad) * msum, block by block, so
// decode gives the bits of every prefill path. The last step of a row
// whose block count is not a multiple of four reads zeros for the missing
// blocks' heads, scales and activation sums (masked loads) and skips them.
// Lane k of each term: block k of the four.
struct QuadTerms {
  __m128 d, dmin, isum, msum;  // d * ad, dmin * ad, and the two exact sums as fp32
};
template <bool k5, bool kFull, class Block>
inline QuadTerms k45_terms(const Block* b, const MatvecAct& a, int64_t i, int n) {
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
  const __m128 ad =
      kFull ? _mm_loadu_ps(a.d + i) : _mm_maskz_loadu_ps(__mmask8((1u << n) - 1), a.d + i);
  QuadTerms t;
  t.d = _mm_mul_ps(
      _mm256_castps256_ps128(_mm256_permutexvar_ps(_mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0), wd)),
      ad);
  t.dmin = _mm_mul_ps(
      _mm256_castps256_ps128(_mm256_permutexvar_ps(_mm256_setr_epi32(1, 3, 5, 7, 0, 0, 0, 0), wd)),
      ad);
  const __m512i scm = unpack_scales_k4(heads);
  // Mins: 8 per block as int16 against the activation's sub-block sums;
  // 128-bit lane k holds block k's four pair sums.
  const __m256i mins = _mm512_castsi512_si256(
      _mm512_permutexvar_epi64(_mm512_setr_epi64(1, 3, 5, 7, 1, 3, 5, 7), scm));
  const __m512i bs =
      kFull ? load64(a.bsum + 8 * i)
            : _mm512_maskz_loadu_epi16(__mmask32((uint64_t(1) << (8 * n)) - 1), a.bsum + 8 * i);
  __m512i mp = _mm512_madd_epi16(_mm512_cvtepu8_epi16(mins), bs);
  mp = _mm512_add_epi32(mp, _mm512_shuffle_epi32(mp, _MM_PERM_BADC));
  mp = _mm512_add_epi32(mp, _mm512_shuffle_epi32(mp, _MM_PERM_CDAB));
  t.msum = _mm_cvtepi32_ps(_mm512_castsi512_si128(_mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), mp)));
  const int8_t* x = a.qs + 256 * i;
  __m512i isums[4];
  for (int k = 0; k < 4; ++k) {
    isums[k] = _mm512_setzero_si512();
    if (!kFull && k >= n) continue;
    const __m512i sv = _mm512_permutexvar_epi64(
        _mm512_set_epi64(2 * k + 1, 2 * k, 2 * k + 1, 2 * k, 2 * k + 1, 2 * k, 2 * k + 1, 2 * k),
        scm);
    isums[k] = k45_scaled_isum<k5>(b[k], x + 256 * k, sv);
  }
  t.isum = lane_sums4(isums);
  return t;
}

// One row: its accumulator takes the quad's n blocks in order.
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
inline __m128 k45_add4(const QuadTerms t[4], int n, __m128 acc) {
  __m128 d[4] = {t[0].d, t[1].d, t[2].d, t[3].d};
  __m128 dmin[4] = {t[0].dmin, t[1].dmin, t[2].dmin, t[3].dmin};
  __m128 isum[4] = {t[0].isum, t[1].isum, t[2].isum, t[3].isum};
  __m128 msum[4] = {t[0].msum, t[1].msum, t[2].msum, t[3].msum};
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

template <bool k5>
float dot_k45(const uint8_t* w, const MatvecAct& a) {
  const auto* blocks = reinterpret_cast<const K45Block<k5>*>(w);
  const int64_t nb = a.K / 256;
  float acc = 0.0f;
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4) acc = k45_add(k45_terms<k5, true>(blocks + i, a, i, 4), 4, acc);
  if (i < nb) {
    const int n = int(nb - i);
    acc = k45_add(k45_terms<k5, false>(blocks + i, a, i, n), n, acc);
  }
  return acc;
}

// Four adjacent rows: each row's quads are reduced to their terms first,
// row after row, so the weights stream in memory order and no quad waits
// on the one before; then the four rows' accumulator chains run side by
// side (k45_add4), each keeping its one order. Reading the four rows
// interleaved instead streams from DRAM at half the rate on one core.
// A row's blocks go in runs of at most kRunQuads quads.
constexpr int64_t kRunQuads = 16;
template <bool k5>
void dot4_k45(const uint8_t* w, int64_t stride, const MatvecAct& a, float* y) {
  const int64_t nb = a.K / 256;
  __m128 acc = _mm_setzero_ps();
  QuadTerms t[4][kRunQuads];
  for (int64_t i0 = 0; i0 < nb; i0 += 4 * kRunQuads) {
    const int64_t i1 = std::min(nb, i0 + 4 * kRunQuads);
    for (int r = 0; r < 4; ++r) {
      const auto* b = reinterpret_cast<const K45Block<k5>*>(w + r * stride);
      int q = 0;
      int64_t i = i0;
      for (; i + 4 <= i1; i += 4) t[r][q++] = k45_terms<k5, true>(b + i, a, i, 4);
      if (i < i1) t[r][q] = k45_terms<k5, false>(b + i, a, i, int(i1 - i));
    }
    for (int64_t i = i0, q = 0; i < i1; i += 4, ++q) {
      const QuadTerms quad[4] = {t[0][q], t[1][q], t[2][q], t[3][q]};
      acc = k45_add4(quad, int(std::min<int64_t>(4, i1 - i)), acc);
    }
  }
  _mm_storeu_ps(y, acc);
}

template <bool k5>
void matvec_k45(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) dot4_k45<k5>(w + r * stride, stride, a, y + r);
  for (; r < rows; ++r) y[r] = dot_k45<k5>(w + r * stride, a);
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

// One Q6_K block's scaled integer sum (offset removed) in 16 int32 lanes.
inline __m512i q6k_isum(const BlockQ6_K& b, const int8_t* x, const int32_t* ns4,
                        const __m512i index[2]) {
  const __m512i m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
  const __m512i sh_lo = join(_mm256_set1_epi16(4), _mm256_set1_epi16(2));
  const __m512i sh_hi = join(_mm256_set1_epi16(0), _mm256_set1_epi16(2));
  // The 16 int8 scales as int16 (words 0-15).
  const __m512i sc16 = _mm512_castsi256_si512(
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales))));
  for (int l = 0; l < int(sizeof(BlockQ6_K)); l += 64)
    prefetch_l2(reinterpret_cast<const uint8_t*>(&b) + l);
  __m512i isum = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h) {
    const __m512i ql = load64(b.ql + 64 * h);
    const __m512i qh = _mm512_broadcast_i64x4(load32(b.qh + 32 * h));
    const __m512i lo = _mm512_or_si512(_mm512_and_si512(ql, m4),
                                       _mm512_and_si512(_mm512_sllv_epi16(qh, sh_lo), m30));
    const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                       _mm512_and_si512(_mm512_srlv_epi16(qh, sh_hi), m30));
    const __m512i plo =
        _mm512_dpbusd_epi32(_mm512_loadu_si512(ns4 + 32 * h), lo, load64(x + 128 * h));
    const __m512i phi =
        _mm512_dpbusd_epi32(_mm512_loadu_si512(ns4 + 32 * h + 16), hi, load64(x + 128 * h + 64));
    isum = _mm512_dpwssd_epi32(isum, pack_sums(plo, phi), _mm512_permutexvar_epi16(index[h], sc16));
  }
  return isum;
}

// Four blocks' scales (d * ad) and exact integer sums as fp32, lane k
// block k; blocks past n are zeros.
inline void q6k_terms(const BlockQ6_K* b, const MatvecAct& a, int64_t i, int n,
                      const __m512i index[2], __m128& scale, __m128& isum) {
  __m512i isums[4];
  alignas(16) float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < 4; ++k) {
    isums[k] = k < n ? q6k_isum(b[k], a.qs + 256 * (i + k), a.ns4 + 64 * (i + k), index)
                     : _mm512_setzero_si512();
    if (k < n) d[k] = avx2::half_to_float(b[k].d);
  }
  scale = _mm_mul_ps(_mm_load_ps(d), _mm_maskz_loadu_ps(__mmask8((1u << n) - 1), a.d + i));
  isum = lane_sums4(isums);
}

// One row: one accumulator takes the blocks in the tile kernels' order
// (qgemm.h).
float dot_q6k(const uint8_t* w, const MatvecAct& a) {
  const auto* b = reinterpret_cast<const BlockQ6_K*>(w);
  const __m512i index[2] = {load64(kQ6ScaleIndex[0]), load64(kQ6ScaleIndex[1])};
  const int64_t nb = a.K / 256;
  float acc = 0.0f;
  for (int64_t i = 0; i < nb; i += 4) {
    const int n = int(std::min<int64_t>(4, nb - i));
    __m128 scale, isum;
    q6k_terms(b + i, a, i, n, index, scale, isum);
    alignas(16) float s[4], v[4];
    _mm_store_ps(s, scale);
    _mm_store_ps(v, isum);
    for (int k = 0; k < n; ++k) acc = std::fma(s[k], v[k], acc);
  }
  return acc;
}

// Four adjacent rows, as dot4_k45: each row's terms first, in memory
// order, then the four chains side by side (lane r: row r).
void dot4_q6k(const uint8_t* w, int64_t stride, const MatvecAct& a, float* y) {
  const __m512i index[2] = {load64(kQ6ScaleIndex[0]), load64(kQ6ScaleIndex[1])};
  const int64_t nb = a.K / 256;
  __m128 acc = _mm_setzero_ps();
  __m128 scale[4][kRunQuads], isum[4][kRunQuads];
  for (int64_t i0 = 0; i0 < nb; i0 += 4 * kRunQuads) {
    const int64_t i1 = std::min(nb, i0 + 4 * kRunQuads);
    for (int r = 0; r < 4; ++r) {
      const auto* b = reinterpret_cast<const BlockQ6_K*>(w + r * stride);
      for (int64_t i = i0, q = 0; i < i1; i += 4, ++q) {
        q6k_terms(b + i, a, i, int(std::min<int64_t>(4, i1 - i)), index, scale[r][q], isum[r][q]);
      }
    }
    for (int64_t i = i0, q = 0; i < i1; i += 4, ++q) {
      __m128 s[4] = {scale[0][q], scale[1][q], scale[2][q], scale[3][q]};
      __m128 v[4] = {isum[0][q], isum[1][q], isum[2][q], isum[3][q]};
      _MM_TRANSPOSE4_PS(s[0], s[1], s[2], s[3]);
      _MM_TRANSPOSE4_PS(v[0], v[1], v[2], v[3]);
      const int n = int(std::min<int64_t>(4, i1 - i));
      for (int k = 0; k < n; ++k) acc = _mm_fmadd_ps(s[k], v[k], acc);
    }
  }
  _mm_storeu_ps(y, acc);
}

void matvec_q6k(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) dot4_q6k(w + r * stride, stride, a, y + r);
  for (; r < rows; ++r) y[r] = dot_q6k(w + r * stride, a);
}

}  // namespace

MatvecFn matvec_kquant_avx512(DType t) {
  switch (t) {
    case DType::q4_k:
      return matvec_k45<false>;
    case DType::q5_k:
      return matvec_k45<true>;
    case DType::q6_k:
      return matvec_q6k;
    default:
      return nullptr;
  }
}

}  // namespace rc::kernels

#include "simd-avx512-end.h"

#else

namespace rc::kernels {
MatvecFn matvec_kquant_avx512(DType) { return nullptr; }
}  // namespace rc::kernels

#endif
