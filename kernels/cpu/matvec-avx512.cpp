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
// eight at a time into eight lanes, K-quant blocks into one accumulator
// (matvec-avx512-kquant.cpp), so a row's result is the same bits as in any
// prefill path.
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
#include "matvec-avx512-util.h"

namespace rc::kernels {
namespace {

using namespace avx512;

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

// Lane k: the exact sum of block k's eight int32 lanes, for blocks 0-7
// held in pairs by p[0..3] (block 2i in the low half of p[i]).
inline __m256i block_sums8(const __m512i p[4]) {
  const __m512i u = quad_sums(p);
  // Lanes 0-1: blocks 0 2 4 6; lanes 2-3: blocks 1 3 5 7.
  const __m512i h = _mm512_add_epi32(u, _mm512_shuffle_i32x4(u, u, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_castsi512_si256(_mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 0, 0, 0, 0, 0, 0, 0, 0), h));
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
    const float s = avx2::half_to_float(b[i].d) * a.d[i];
    lane[k] = std::fma(s, float(block_isum<T>(b[i], a.qs + 32 * i, a.ns4 + 8 * i)), lane[k]);
    if constexpr (T::kMin) lane[k] = std::fma(avx2::half_to_float(b[i].m), a.ms[i], lane[k]);
  }
  return avx2::hsum(_mm256_load_ps(lane));
}

template <class T>
void matvec_q32(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    y[r] = dot_q32<T>(reinterpret_cast<const typename T::Block*>(w + r * stride), a);
  }
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
    case DType::q5_k:
    case DType::q6_k:
      return matvec_kquant_avx512(t);
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
