// matvec.h kernels on 512-bit registers: AVX-512 F/BW/VL + VNNI.
//
// Quantized rows: the weight quants are read as unsigned bytes and
// multiplied with the signed activation quants by vpdpbusd (64 products per
// instruction). A weight offset c (Q8_0 read as w + 128, Q4_0's 8, Q5_0's
// 16, Q6_K's 32) is removed by starting the accumulator at ns4 (ns4 =
// minus the activation sums of 4 times c, prepared once per matmul), which
// costs nothing per weight byte. K-quant sub-block scales are applied in
// integers by vpdpwssd (each lane's 4-product sum fits in 16 bits). Each
// block's lanes are then reduced to its exact integer dot, which is scaled
// and added in the tile kernels' fp32 order (qgemm.h): 32-element blocks
// eight at a time into eight lanes, K-quant blocks into one accumulator,
// so a row's result is the same bits as in any prefill path.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "matvec.h"
#include "quant-blocks.h"

#include "simd-avx512-begin.h"

#if defined(RC_HAVE_AVX512_REGION)
#include "avx2-util.h"  // the region enables AVX2 too

namespace rc::kernels {
namespace {

inline __m512i load64(const void* p) { return _mm512_loadu_si512(p); }
inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Software prefetch this many bytes ahead of the weight stream. The
// hardware prefetchers stop at 4 KiB page boundaries (mmapped weights are in
// 4 KiB pages), so one core's DRAM stream is much faster with it
// (kernel-bench --decode-core shows it; 4-16 KiB all help, 16 KiB most).
constexpr int64_t kPrefetchBytes = 16384;
inline void prefetch(const void* p) {
  _mm_prefetch(static_cast<const char*>(p) + kPrefetchBytes, _MM_HINT_T0);
}
inline float half_to_float(uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(int(h))));
}
inline __m512i join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
inline int32_t hsum8_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
  return _mm_cvtsi128_si32(s);
}

// ---- 32-element blocks: Q8_0, Q4_0, Q5_0, Q5_1 ---------------------------

// Each type: the block, whether its quants carry an offset (then ns4 holds
// minus the offset times the activation sums), and its quants as unsigned bytes in element order,
// for one block (256 bits) and for two consecutive blocks (512 bits).
struct Q8_0T {
  using Block = BlockQ8_0;
  static constexpr bool kOffset = true;  // w + 128
  static constexpr bool kMin = false;
  static __m256i one(const Block& b) {
    return _mm256_xor_si256(load32(b.qs), _mm256_set1_epi8(-128));
  }
  static __m512i two(const Block* b) {
    return _mm512_xor_si512(join(load32(b[0].qs), load32(b[1].qs)), _mm512_set1_epi8(-128));
  }
};

// 16 nibble bytes -> 32 quants: low nibbles are elements 0-15.
inline __m256i nibbles32(const uint8_t* qs) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0f));
}
// Two blocks' nibble bytes -> 64 quants.
inline __m512i nibbles64(const uint8_t* qs0, const uint8_t* qs1) {
  const __m512i t = _mm512_castsi256_si512(
      _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs1)),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs0))));
  const __m512i dup = _mm512_shuffle_i64x2(t, t, _MM_SHUFFLE(1, 1, 0, 0));
  return _mm512_and_si512(_mm512_srlv_epi64(dup, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0)),
                          _mm512_set1_epi8(0x0f));
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

struct Q4_0T {
  using Block = BlockQ4_0;
  static constexpr bool kOffset = true;
  static constexpr bool kMin = false;
  static __m256i one(const Block& b) { return nibbles32(b.qs); }
  static __m512i two(const Block* b) { return nibbles64(b[0].qs, b[1].qs); }
};

// Q5_0 / Q5_1: nibbles plus bit j of qh as 16 (a masked add: no byte-masked or).
template <class B>
struct Q5T {
  using Block = B;
  static constexpr bool kMin = std::is_same_v<B, BlockQ5_1>;
  static constexpr bool kOffset = !kMin;
  static __m256i one(const Block& b) {
    return _mm256_mask_add_epi8(nibbles32(b.qs), __mmask32(load_u32(b.qh)), nibbles32(b.qs),
                                _mm256_set1_epi8(0x10));
  }
  static __m512i two(const Block* b) {
    const __m512i n = nibbles64(b[0].qs, b[1].qs);
    const __mmask64 h = __mmask64(load_u32(b[0].qh)) | (__mmask64(load_u32(b[1].qh)) << 32);
    return _mm512_mask_add_epi8(n, h, n, _mm512_set1_epi8(0x10));
  }
};

// Integer dot of one or two blocks, offset removed.
template <class T>
inline __m512i pair_isum(const typename T::Block* b, const int8_t* x, const int32_t* ns4) {
  __m512i acc = _mm512_setzero_si512();
  if constexpr (T::kOffset) acc = _mm512_loadu_si512(ns4);
  return _mm512_dpbusd_epi32(acc, T::two(b), load64(x));
}
template <class T>
inline int32_t block_isum(const typename T::Block& b, const int8_t* x, const int32_t* ns4) {
  __m256i acc = _mm256_setzero_si256();
  if constexpr (T::kOffset) acc = load32(ns4);
  return hsum8_i32(_mm256_dpbusd_epi32(acc, T::one(b), load32(x)));
}

// 8 fp16 values at byte offset `off` of 8 consecutive blocks.
template <class Block>
inline __m256 gather_half8(const Block* b, int off) {
  constexpr int s = int(sizeof(Block));
  const __m256i idx = _mm256_setr_epi32(0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s, 7 * s);
  const __m256i v = _mm256_i32gather_epi32(
      reinterpret_cast<const int*>(reinterpret_cast<const uint8_t*>(b) + off), idx, 1);
  return _mm256_cvtph_ps(_mm256_cvtepi32_epi16(v));
}

// 128-bit lane L of the result: the sums of the four int32 lanes of 128-bit
// lane L of v[0], v[1], v[2] and v[3], in that order.
inline __m512i quad_sums(const __m512i v[4]) {
  const __m512i t0 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]), _mm512_unpackhi_epi32(v[0], v[1]));
  const __m512i t1 =
      _mm512_add_epi32(_mm512_unpacklo_epi32(v[2], v[3]), _mm512_unpackhi_epi32(v[2], v[3]));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
}

// Lane k: the exact sum of block k's eight int32 lanes, for blocks 0-7
// held in pairs by p[0..3] (block 2i in the low half of p[i]).
inline __m256i block_sums8(const __m512i p[4]) {
  const __m512i u = quad_sums(p);
  // Lanes 0-1: blocks 0 2 4 6; lanes 2-3: blocks 1 3 5 7.
  const __m512i h = _mm512_add_epi32(u, _mm512_shuffle_i32x4(u, u, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_castsi512_si256(_mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 0, 0, 0, 0, 0, 0, 0, 0), h));
}

// Lane k: the exact sum of v[k]'s sixteen int32 lanes, as fp32 (rounded
// as float(int32_t) rounds).
inline __m128 lane_sums4(const __m512i v[4]) {
  const __m512i u = quad_sums(v);
  const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(u), _mm512_extracti64x4_epi64(u, 1));
  return _mm_cvtepi32_ps(_mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
}

// The tile kernels' order (qgemm.h): lane k of an eight-lane accumulator
// takes blocks k, k + 8, ... (scale times exact integer sum, then Q5_1's
// min term), and the lanes are added as hsum does, so decode gives the
// bits of every prefill path.
template <class T>
float dot_q32(const typename T::Block* b, const MatvecAct& a) {
  const int64_t nb = a.K / 32;
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= nb; i += 8) {
    __m512i p[4];
    for (int k = 0; k < 4; ++k) {
      const int64_t j = i + 2 * k;
      prefetch(b + j);
      p[k] = pair_isum<T>(b + j, a.qs + 32 * j, a.ns4 + 8 * j);
    }
    const __m256 s = _mm256_mul_ps(gather_half8(b + i, 0), _mm256_loadu_ps(a.d + i));
    acc = _mm256_fmadd_ps(s, _mm256_cvtepi32_ps(block_sums8(p)), acc);
    if constexpr (T::kMin) {
      acc = _mm256_fmadd_ps(gather_half8(b + i, 2), _mm256_loadu_ps(a.ms + i), acc);
    }
  }
  alignas(32) float lane[8];
  _mm256_store_ps(lane, acc);
  for (int k = 0; i < nb; ++i, ++k) {
    const float s = half_to_float(b[i].d) * a.d[i];
    lane[k] = std::fma(s, float(block_isum<T>(b[i], a.qs + 32 * i, a.ns4 + 8 * i)), lane[k]);
    if constexpr (T::kMin) lane[k] = std::fma(half_to_float(b[i].m), a.ms[i], lane[k]);
  }
  return avx2::hsum(_mm256_load_ps(lane));
}

template <class T>
void matvec_q32(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    y[r] = dot_q32<T>(reinterpret_cast<const typename T::Block*>(w + r * stride), a);
  }
}

// ---- K-quants ------------------------------------------------------------

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
// integer sum and mins sum are reduced to exact integers, then added to
// the row's one accumulator in the tile kernels' order (qgemm.h):
// acc += (d * ad) * isum, acc -= (dmin * ad) * msum, block by block, so
// decode gives the bits of every prefill path. The last step of a row
// whose block count is not a multiple of four reads zeros for the missing
// blocks' heads, scales and activation sums (masked loads) and skips them.
// One row at a time: two rows interleaved (two weight streams) read
// slower from DRAM on one core, and one row's chains fill the core.
template <bool k5, bool kFull, class Block>
inline float k45_quad(const Block* b, const MatvecAct& a, int64_t i, int n, float acc) {
  for (int l = 0; l < 4 * int(sizeof(Block)); l += 64)
    prefetch(reinterpret_cast<const uint8_t*>(b) + l);
  auto head = [&](int k) {
    return kFull || k < n ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k))
                          : _mm_setzero_si128();
  };
  const __m512i heads =
      join(_mm256_set_m128i(head(1), head(0)), _mm256_set_m128i(head(3), head(2)));
  // [d, dmin] of the four blocks times their activation scales.
  const __m256 wd = _mm256_cvtph_ps(_mm512_castsi512_si128(_mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), heads)));
  const __m128 ad =
      kFull ? _mm_loadu_ps(a.d + i) : _mm_maskz_loadu_ps(__mmask8((1u << n) - 1), a.d + i);
  alignas(32) float dd[8];
  _mm256_store_ps(dd,
                  _mm256_mul_ps(wd, _mm256_permutexvar_ps(_mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3),
                                                          _mm256_castps128_ps256(ad))));
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
  alignas(16) float msum[4];
  _mm_store_ps(msum, _mm_cvtepi32_ps(_mm512_castsi512_si128(_mm512_permutexvar_epi32(
                         _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), mp))));
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
  alignas(16) float isum[4];
  _mm_store_ps(isum, lane_sums4(isums));
  for (int k = 0; k < 4; ++k) {
    if (!kFull && k >= n) break;
    acc = std::fma(dd[2 * k], isum[k], acc);
    acc = std::fma(-dd[2 * k + 1], msum[k], acc);
  }
  return acc;
}

template <bool k5>
float dot_k45(const uint8_t* w, const MatvecAct& a) {
  using Block = std::conditional_t<k5, BlockQ5_K, BlockQ4_K>;
  const auto* blocks = reinterpret_cast<const Block*>(w);
  const int64_t nb = a.K / 256;
  float acc = 0.0f;
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4) acc = k45_quad<k5, true>(blocks + i, a, i, 4, acc);
  if (i < nb) acc = k45_quad<k5, false>(blocks + i, a, i, int(nb - i), acc);
  return acc;
}

template <bool k5>
void matvec_k45(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  for (int64_t r = 0; r < rows; ++r) y[r] = dot_k45<k5>(w + r * stride, a);
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
    prefetch(reinterpret_cast<const uint8_t*>(&b) + l);
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

// Four blocks per step; their sums reduced together, then added block by
// block to one accumulator in the tile kernels' order (qgemm.h).
float dot_q6k(const uint8_t* w, const MatvecAct& a) {
  const auto* b = reinterpret_cast<const BlockQ6_K*>(w);
  const __m512i index[2] = {load64(kQ6ScaleIndex[0]), load64(kQ6ScaleIndex[1])};
  const int64_t nb = a.K / 256;
  float acc = 0.0f;
  for (int64_t i = 0; i < nb; i += 4) {
    const int n = int(std::min<int64_t>(4, nb - i));
    __m512i isums[4];
    for (int k = 0; k < 4; ++k) {
      isums[k] = k < n ? q6k_isum(b[i + k], a.qs + 256 * (i + k), a.ns4 + 64 * (i + k), index)
                       : _mm512_setzero_si512();
    }
    alignas(16) float isum[4];
    _mm_store_ps(isum, lane_sums4(isums));
    for (int k = 0; k < n; ++k)
      acc = std::fma(half_to_float(b[i + k].d) * a.d[i + k], isum[k], acc);
  }
  return acc;
}

void matvec_q6k(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  for (int64_t r = 0; r < rows; ++r) y[r] = dot_q6k(w + r * stride, a);
}

}  // namespace

MatvecFn matvec_avx512(DType t) {
  switch (t) {
    case DType::q8_0:
      return matvec_q32<Q8_0T>;
    case DType::q4_0:
      return matvec_q32<Q4_0T>;
    case DType::q5_0:
      return matvec_q32<Q5T<BlockQ5_0>>;
    case DType::q5_1:
      return matvec_q32<Q5T<BlockQ5_1>>;
    case DType::q4_k:
      return matvec_k45<false>;
    case DType::q5_k:
      return matvec_k45<true>;
    case DType::q6_k:
      return matvec_q6k;
    case DType::f32:
    case DType::f16:
    case DType::bf16:
      return nullptr;  // float weights decode with the tiles' bits (hdecode_avx2)
  }
  return nullptr;
}

}  // namespace rc::kernels

#include "simd-avx512-end.h"

#else

namespace rc::kernels {
MatvecFn matvec_avx512(DType) { return nullptr; }
}  // namespace rc::kernels

#endif
