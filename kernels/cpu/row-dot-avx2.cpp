// AVX2 dot kernels. Quantized weights use the integer path: unpack the
// weight quants to bytes, multiply-add with the Q8A activation bytes
// (maddubs/madd), and scale once per 32-element block, mirroring
// row-dot-scalar.cpp exactly in integer arithmetic.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "act-quant.h"
#include "quant-blocks.h"
#include "row-dot.h"

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
#include "avx2-util.h"

namespace rc::kernels {
namespace {

using namespace avx2;

// Software prefetch this far ahead of the weight stream: the hardware
// prefetchers stop at 4 KiB page boundaries, and a core's DRAM stream
// is much faster with it (as in matvec-avx512.cpp; kernel-bench
// --decode-core with RADIXCHAT_CPU_MATVEC=0 shows the row dots' rate). A
// prefetch past the end of the weights is harmless (no fault).
constexpr int64_t kPrefetchBytes = 16384;
inline void prefetch(const void* p, int64_t off = 0) {
  _mm_prefetch(static_cast<const char*>(p) + off + kPrefetchBytes, _MM_HINT_T0);
}

float dot_f32(const void* w, const void* act, int64_t n) {
  const auto* a = static_cast<const float*>(w);
  const auto* x = static_cast<const float*>(act);
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    prefetch(a + i);
    prefetch(a + i, 64);
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(x + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(x + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(x + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(x + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(x + i), s0);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; ++i) sum += a[i] * x[i];
  return sum;
}

template <bool kBf16>
inline __m256 load8(const uint16_t* p) {
  return kBf16 ? load8_bf16(p) : load8_f16(p);
}

template <bool kBf16>
float dot_half(const void* w, const void* act, int64_t n) {
  const auto* a = static_cast<const uint16_t*>(w);
  const auto* x = static_cast<const float*>(act);
  constexpr auto load = load8<kBf16>;
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    prefetch(a + i);
    s0 = _mm256_fmadd_ps(load(a + i), _mm256_loadu_ps(x + i), s0);
    s1 = _mm256_fmadd_ps(load(a + i + 8), _mm256_loadu_ps(x + i + 8), s1);
    s2 = _mm256_fmadd_ps(load(a + i + 16), _mm256_loadu_ps(x + i + 16), s2);
    s3 = _mm256_fmadd_ps(load(a + i + 24), _mm256_loadu_ps(x + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(load(a + i), _mm256_loadu_ps(x + i), s0);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; ++i) {
    const float wi = kBf16 ? _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(int(a[i]) << 16)))
                           : half_to_float(a[i]);
    sum += wi * x[i];
  }
  return sum;
}

// Integer products of one 32-element block with its activation block, as
// eight int32 partial sums. Q4_0 multiplies its unsigned nibbles (0..15)
// directly; dot_q32 subtracts the 8 * sum(a) offset once per four blocks,
// which is cheaper than recentring and sign-moving every block.
inline __m256i block_dot(const BlockQ8_0& b, const BlockQ8A& a) {
  return dot_i8_i8(load32(b.qs), load32(a.qs));
}
inline __m256i block_dot(const BlockQ4_0& b, const BlockQ8A& a) {
  // Nibbles in element order: low nibbles are elements 0-15.
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  const __m256i nib =
      _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0f));
  return dot_u8_i8(nib, load32(a.qs));
}
// Q5_0 / Q5_1: unsigned 5-bit quants (0..31); offset or min applied per block.
inline __m256i block_dot(const BlockQ5_0& b, const BlockQ8A& a) {
  return dot_u8_i8(q5_unpack32(b.qh, b.qs), load32(a.qs));
}
inline __m256i block_dot(const BlockQ5_1& b, const BlockQ8A& a) {
  return dot_u8_i8(q5_unpack32(b.qh, b.qs), load32(a.qs));
}
template <class Block>
constexpr int kQuantOffset = std::is_same_v<Block, BlockQ4_0>   ? 8
                             : std::is_same_v<Block, BlockQ5_0> ? 16
                                                                : 0;
template <class Block>
constexpr bool kHasMin = std::is_same_v<Block, BlockQ5_1>;

// The min term of a Q5_1 block: m * a.d * sum(a.qs); zero for the others.
template <class Block>
inline float block_min(const Block& b, const BlockQ8A& a) {
  if constexpr (kHasMin<Block>) {
    return half_to_float(b.m) * a.d * float(a.sum[0] + a.sum[1]);
  } else {
    (void)b, (void)a;
    return 0.0f;
  }
}

// The two 128-bit halves of v added: four int32.
inline __m128i add_halves(__m256i v) {
  return _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

inline int32_t sum_pair(const BlockQ8A& a) {
  int32_t v;
  std::memcpy(&v, a.sum, 4);  // the two int16 halves, for madd
  return v;
}

// Q4_0 / Q5_0 / Q5_1 / Q8_0 x Q8A. Each block has its own weight and
// activation scale, so four blocks are reduced together (two rounds of
// unpack-and-add leave one int32 per block and 128-bit half, a little
// faster than the three horizontal adds it replaced) and scaled by
// one vector of four products, instead of a scalar multiply and broadcast
// per block.
template <class Block>
float dot_q32(const void* w, const void* act, int64_t n) {
  const auto* b = static_cast<const Block*>(w);
  const auto* a = static_cast<const BlockQ8A*>(act);
  const int64_t nb = n / kQK;
  constexpr int off = kQuantOffset<Block>;
  __m128 acc = _mm_setzero_ps();
  float mins = 0.0f;
  int64_t i = 0;
  for (; i + 4 <= nb; i += 4) {
    prefetch(b + i);
    prefetch(b + i, 64);
    if constexpr (sizeof(Block) * 4 > 128) prefetch(b + i, 128);
    const __m256i q0 = block_dot(b[i], a[i]), q1 = block_dot(b[i + 1], a[i + 1]);
    const __m256i q2 = block_dot(b[i + 2], a[i + 2]), q3 = block_dot(b[i + 3], a[i + 3]);
    const __m256i t01 =
        _mm256_add_epi32(_mm256_unpacklo_epi32(q0, q1), _mm256_unpackhi_epi32(q0, q1));
    const __m256i t23 =
        _mm256_add_epi32(_mm256_unpacklo_epi32(q2, q3), _mm256_unpackhi_epi32(q2, q3));
    const __m256i halves =
        _mm256_add_epi32(_mm256_unpacklo_epi64(t01, t23), _mm256_unpackhi_epi64(t01, t23));
    __m128i sums = add_halves(halves);
    if constexpr (off != 0) {
      // off * (sum[0] + sum[1]) per block.
      const __m128i s = _mm_setr_epi32(sum_pair(a[i]), sum_pair(a[i + 1]), sum_pair(a[i + 2]),
                                       sum_pair(a[i + 3]));
      sums = _mm_sub_epi32(sums, _mm_madd_epi16(s, _mm_set1_epi16(off)));
    }
    const uint64_t packed = uint64_t(b[i].d) | uint64_t(b[i + 1].d) << 16 |
                            uint64_t(b[i + 2].d) << 32 | uint64_t(b[i + 3].d) << 48;
    const __m128 wd = _mm_cvtph_ps(_mm_cvtsi64_si128(int64_t(packed)));
    const __m128 s = _mm_mul_ps(wd, _mm_setr_ps(a[i].d, a[i + 1].d, a[i + 2].d, a[i + 3].d));
    acc = _mm_fmadd_ps(_mm_cvtepi32_ps(sums), s, acc);
    if constexpr (kHasMin<Block>) {
      mins += (block_min(b[i], a[i]) + block_min(b[i + 1], a[i + 1])) +
              (block_min(b[i + 2], a[i + 2]) + block_min(b[i + 3], a[i + 3]));
    }
  }
  float tail = 0.0f;
  for (; i < nb; ++i) {
    const float s = half_to_float(b[i].d) * a[i].d;
    acc = _mm_fmadd_ps(_mm_cvtepi32_ps(add_halves(block_dot(b[i], a[i]))), _mm_set1_ps(s), acc);
    tail -= float(off * (a[i].sum[0] + a[i].sum[1])) * s;
    mins += block_min(b[i], a[i]);
  }
  return hsum(acc) + tail + mins;
}

// The eight 6-bit scales and mins of a Q4_K block, unpacked with 32-bit
// masks (see q4k_scale_min for the layout): sc[j] and m[j] for j = 0..7.
inline void q4k_unpack_scales(const uint8_t* s, uint8_t sc[8], uint8_t m[8]) {
  uint32_t w0, w1, w2;
  std::memcpy(&w0, s, 4);
  std::memcpy(&w1, s + 4, 4);
  std::memcpy(&w2, s + 8, 4);
  const uint32_t sc_lo = w0 & 0x3f3f3f3fu;
  const uint32_t sc_hi = (w2 & 0x0f0f0f0fu) | (((w0 >> 6) & 0x03030303u) << 4);
  const uint32_t m_lo = w1 & 0x3f3f3f3fu;
  const uint32_t m_hi = ((w2 >> 4) & 0x0f0f0f0fu) | (((w1 >> 6) & 0x03030303u) << 4);
  std::memcpy(sc, &sc_lo, 4);
  std::memcpy(sc + 4, &sc_hi, 4);
  std::memcpy(m, &m_lo, 4);
  std::memcpy(m + 4, &m_hi, 4);
}

// Two sub-blocks' eight int16 pair sums folded into [4 of a | 4 of b] (each
// int16 then holds twice the products; the caller static_asserts the bound).
inline __m128i fold_pair(__m128i a, __m128i b) {
  return _mm_add_epi16(_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b));
}

// Bit j of every byte of h moved to bit 4 (0 or 16), the fifth bit of a Q5_K
// quant of sub-block j. 16-bit shifts: the mask keeps only the byte's own bit.
inline __m128i q5_high(__m128i h, int j) {
  const __m128i moved = j <= 4 ? _mm_sll_epi16(h, _mm_cvtsi32_si128(4 - j))
                               : _mm_srl_epi16(h, _mm_cvtsi32_si128(j - 4));
  return _mm_and_si128(moved, _mm_set1_epi8(0x10));
}

// Byte shuffles of eight int16 scales: scale 2p in int16 lanes 0-3 and
// scale 2p + 1 in lanes 4-7, the layout fold_pair leaves.
alignas(16) constexpr uint8_t kScaleQuads[4][16] = {
    {0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3},
    {4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7},
    {8, 9, 8, 9, 8, 9, 8, 9, 10, 11, 10, 11, 10, 11, 10, 11},
    {12, 13, 12, 13, 12, 13, 12, 13, 14, 15, 14, 15, 14, 15, 14, 15},
};

// Q4_K / Q5_K x Q8K: one activation scale per super-block, so the eight
// sub-block scales are applied in integers and the super-block costs a
// single int->float conversion. A sub-block's 16 pair sums are reduced in
// 16 bits to four int16 of four pairs each (its two halves added, then
// fold_pair with the sub-block that shares its bytes) before one madd by
// the scales of both. On 128-bit vectors, because the halves of a
// sub-block then sit in two registers and add in one instruction: on a CPU
// that splits 256-bit operations in two (Zen 1) this beat the 256-bit
// kernel, which needed a shuffle per half. Q5_K adds bit
// j of qh[l] as 16 to element l of sub-block j.
template <class Block>
float dot_qk_affine(const void* w, const void* act, int64_t n) {
  constexpr bool k5 = std::is_same_v<Block, BlockQ5_K>;
  // Four pairs of (quant <= 15 or 31) * |activation| <= 127 per int16.
  static_assert(4 * 2 * (k5 ? 31 : 15) * 127 <= 32767);
  const auto* b = static_cast<const Block*>(w);
  const auto* a = static_cast<const BlockQ8K*>(act);
  const __m128i m4 = _mm_set1_epi8(0x0f);
  auto ld = [](const void* v) { return _mm_loadu_si128(static_cast<const __m128i*>(v)); };
  __m128 acc = _mm_setzero_ps();
  for (int64_t i = 0; i < n / kQKK; ++i) {
    for (int l = 0; l < int(sizeof(Block)); l += 64) prefetch(b + i, l);
    uint8_t sc[8], m[8];
    q4k_unpack_scales(b[i].scales, sc, m);
    // Mins: sum_j m[j] * bsum[j] as four int32 from one madd of eight
    // 16-bit pairs, subtracted lane-wise with the scales below (no
    // horizontal sum per super-block).
    const __m128i mp =
        _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(m))),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].bsum)));
    // [d, dmin] * the activation scale, both halves converted at once.
    const __m128 dd = _mm_mul_ps(
        _mm_cvtph_ps(_mm_cvtsi32_si128(int(b[i].d) | int(b[i].dmin) << 16)), _mm_set1_ps(a[i].d));
    const __m128i sc16 = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc)));
    __m128i sumi = _mm_setzero_si128();
    [[maybe_unused]] __m128i h0, h1;
    if constexpr (k5) h0 = ld(b[i].qh), h1 = ld(b[i].qh + 16);
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m128i q0 = ld(b[i].qs + 32 * p), q1 = ld(b[i].qs + 32 * p + 16);
      __m128i l0 = _mm_and_si128(q0, m4), l1 = _mm_and_si128(q1, m4);
      __m128i u0 = _mm_and_si128(_mm_srli_epi16(q0, 4), m4);
      __m128i u1 = _mm_and_si128(_mm_srli_epi16(q1, 4), m4);
      if constexpr (k5) {
        l0 = _mm_or_si128(l0, q5_high(h0, 2 * p)), l1 = _mm_or_si128(l1, q5_high(h1, 2 * p));
        u0 = _mm_or_si128(u0, q5_high(h0, 2 * p + 1));
        u1 = _mm_or_si128(u1, q5_high(h1, 2 * p + 1));
      }
      const int8_t* x = a[i].qs + 64 * p;
      const __m128i lo =
          _mm_add_epi16(_mm_maddubs_epi16(l0, ld(x)), _mm_maddubs_epi16(l1, ld(x + 16)));
      const __m128i hi =
          _mm_add_epi16(_mm_maddubs_epi16(u0, ld(x + 32)), _mm_maddubs_epi16(u1, ld(x + 48)));
      const __m128i scales =
          _mm_shuffle_epi8(sc16, _mm_load_si128(reinterpret_cast<const __m128i*>(kScaleQuads[p])));
      sumi = _mm_add_epi32(sumi, _mm_madd_epi16(fold_pair(lo, hi), scales));
    }
    acc = _mm_fmadd_ps(_mm_broadcastss_ps(dd), _mm_cvtepi32_ps(sumi), acc);
    acc = _mm_fnmadd_ps(_mm_permute_ps(dd, 0x55), _mm_cvtepi32_ps(mp), acc);
  }
  return hsum(acc);
}

// Byte shuffles picking scale g for bytes 0-7 and scale g + 1 for 8-15.
alignas(16) constexpr uint8_t kScalePairs[8][16] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
    {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3},
    {4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5},
    {6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7},
    {8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9},
    {10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11},
    {12, 12, 12, 12, 12, 12, 12, 12, 13, 13, 13, 13, 13, 13, 13, 13},
    {14, 14, 14, 14, 14, 14, 14, 14, 15, 15, 15, 15, 15, 15, 15, 15},
};

// Q6_K x Q8K: the unsigned quants (0..63) multiply the activations as they
// are, and the 32 offset comes off once per super-block as
// 32 * sum_j scale[j] * sum16[j]: no recentring or sign-moving per element.
// The sixteen 8-bit sub-block scales are applied in integers.
float dot_q6_k(const void* w, const void* act, int64_t n) {
  // A pair of 63 * |activation| <= 127 per int16 of maddubs.
  static_assert(2 * 63 * 127 <= 32767);
  const auto* b = static_cast<const BlockQ6_K*>(w);
  const auto* a = static_cast<const BlockQ8K*>(act);
  const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQKK; ++i) {
    for (int l = 0; l < int(sizeof(BlockQ6_K)); l += 64) prefetch(b + i, l);
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].scales));
    const __m256i offsets = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), load32(a[i].sum16));
    __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(offsets, 5));
    for (int half = 0; half < 2; ++half) {
      const __m256i ql0 = load32(b[i].ql + 64 * half);
      const __m256i ql1 = load32(b[i].ql + 64 * half + 32);
      const __m256i qh = load32(b[i].qh + 32 * half);
      // Byte-wise shifts done on 16-bit lanes: the bits that cross into the
      // neighbouring byte are removed by the masks.
      __m256i q[4];
      q[0] = _mm256_or_si256(_mm256_and_si256(ql0, m4),
                             _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
      q[1] = _mm256_or_si256(_mm256_and_si256(ql1, m4),
                             _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
      q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                             _mm256_and_si256(qh, m30));
      q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                             _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
      for (int k = 0; k < 4; ++k) {
        // 16-bit pair sums: lanes 0-7 are elements 0-15 (scale 2k), 8-15 the rest.
        const __m256i pairs = _mm256_maddubs_epi16(q[k], load32(a[i].qs + 128 * half + 32 * k));
        const __m256i scales = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(
            sc8, _mm_load_si128(reinterpret_cast<const __m128i*>(kScalePairs[4 * half + k]))));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(pairs, scales));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(half_to_float(b[i].d) * a[i].d), _mm256_cvtepi32_ps(sumi),
                          acc);
  }
  return hsum(acc);
}

}  // namespace

RowDotFn row_dot_avx2(DType t) {
  switch (t) {
    case DType::f32:
      return dot_f32;
    case DType::f16:
      return dot_half<false>;
    case DType::bf16:
      return dot_half<true>;
    case DType::q8_0:
      return dot_q32<BlockQ8_0>;
    case DType::q4_0:
      return dot_q32<BlockQ4_0>;
    case DType::q5_0:
      return dot_q32<BlockQ5_0>;
    case DType::q5_1:
      return dot_q32<BlockQ5_1>;
    case DType::q4_k:
      return dot_qk_affine<BlockQ4_K>;
    case DType::q5_k:
      return dot_qk_affine<BlockQ5_K>;
    case DType::q6_k:
      return dot_q6_k;
  }
  return row_dot_scalar(t);
}

}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else  // no AVX2 region on this architecture

namespace rc::kernels {
RowDotFn row_dot_avx2(DType t) { return row_dot_scalar(t); }
}  // namespace rc::kernels

#endif
