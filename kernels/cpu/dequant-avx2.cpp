// AVX2 row dequantizers: the reference formulas of quant.cpp, eight
// elements at a time (multiplies and subtracts kept separate so the results
// match the scalar code bit for bit).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "fast-dequant.h"
#include "quant-blocks.h"
#include "quant.h"

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
#include "avx2-util.h"

namespace rc::kernels {
namespace {

using namespace avx2;

// Eight int32 from eight bytes, zero- or sign-extended.
inline __m256 u8x8_to_f32(const uint8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

void deq_f16(const void* src, float* y, int64_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, load8_f16(s + i));
  for (; i < n; ++i) y[i] = half_to_float(s[i]);
}

void deq_bf16(const void* src, float* y, int64_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, load8_bf16(s + i));
  for (; i < n; ++i) {
    const uint32_t u = uint32_t(s[i]) << 16;
    std::memcpy(y + i, &u, 4);
  }
}

void deq_q8_0(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    const __m256 d = _mm256_set1_ps(half_to_float(b[i].d));
    for (int j = 0; j < kQK; j += 8) {
      const __m256i q =
          _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b[i].qs + j)));
      _mm256_storeu_ps(y + j, _mm256_mul_ps(d, _mm256_cvtepi32_ps(q)));
    }
  }
}

void deq_q4_0(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ4_0*>(src);
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m256i eight = _mm256_set1_epi32(8);
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    const __m256 d = _mm256_set1_ps(half_to_float(b[i].d));
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs));
    alignas(16) uint8_t q[32];
    _mm_store_si128(reinterpret_cast<__m128i*>(q), _mm_and_si128(raw, mask));
    _mm_store_si128(reinterpret_cast<__m128i*>(q + 16),
                    _mm_and_si128(_mm_srli_epi16(raw, 4), mask));
    for (int j = 0; j < kQK; j += 8) {
      const __m256i v = _mm256_sub_epi32(
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + j))), eight);
      _mm256_storeu_ps(y + j, _mm256_mul_ps(d, _mm256_cvtepi32_ps(v)));
    }
  }
}

// Q5_0 (x = d (q - 16)) and Q5_1 (x = d q + m): quants unpacked to bytes
// once per block, then eight at a time.
template <bool kMin>
void deq_q5(const void* src, float* y, int64_t n) {
  using Block = std::conditional_t<kMin, BlockQ5_1, BlockQ5_0>;
  const auto* b = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
    alignas(32) uint8_t q[32];
    _mm256_store_si256(reinterpret_cast<__m256i*>(q), q5_unpack32(b[i].qh, b[i].qs));
    const __m256 d = _mm256_set1_ps(half_to_float(b[i].d));
    for (int j = 0; j < kQK; j += 8) {
      if constexpr (kMin) {
        const __m256 m = _mm256_set1_ps(half_to_float(b[i].m));
        _mm256_storeu_ps(y + j, _mm256_add_ps(_mm256_mul_ps(d, u8x8_to_f32(q + j)), m));
      } else {
        const __m256i v = _mm256_sub_epi32(
            _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + j))),
            _mm256_set1_epi32(16));
        _mm256_storeu_ps(y + j, _mm256_mul_ps(d, _mm256_cvtepi32_ps(v)));
      }
    }
  }
}

void deq_q5_k(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ5_K*>(src);
  const __m256i mask = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const float d = half_to_float(b[i].d), dmin = half_to_float(b[i].dmin);
    const __m256i qh = load32(b[i].qh);
    for (int j = 0; j < 8; ++j, y += 32) {
      // Sub-block j: nibble (j & 1) of qs[32 (j / 2) + l] and bit j of qh[l].
      const __m256i raw = load32(b[i].qs + 32 * (j / 2));
      const __m256i nib =
          _mm256_and_si256(_mm256_srl_epi16(raw, _mm_cvtsi32_si128(4 * (j & 1))), mask);
      const __m256i hb = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(j)), one);
      alignas(32) uint8_t q[32];
      _mm256_store_si256(reinterpret_cast<__m256i*>(q),
                         _mm256_or_si256(nib, _mm256_slli_epi16(hb, 4)));
      uint8_t sc, m;
      q4k_scale_min(j, b[i].scales, &sc, &m);
      const __m256 scale = _mm256_set1_ps(d * float(sc));
      const __m256 min = _mm256_set1_ps(dmin * float(m));
      for (int l = 0; l < 32; l += 8) {
        _mm256_storeu_ps(y + l, _mm256_sub_ps(_mm256_mul_ps(scale, u8x8_to_f32(q + l)), min));
      }
    }
  }
}

void deq_q4_k(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ4_K*>(src);
  const __m128i mask = _mm_set1_epi8(0x0f);
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const float d = half_to_float(b[i].d), dmin = half_to_float(b[i].dmin);
    for (int p = 0; p < 4; ++p) {
      alignas(16) uint8_t q[64];  // sub-block 2p, then 2p + 1
      for (int h = 0; h < 2; ++h) {
        const __m128i raw =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].qs + 32 * p + 16 * h));
        _mm_store_si128(reinterpret_cast<__m128i*>(q + 16 * h), _mm_and_si128(raw, mask));
        _mm_store_si128(reinterpret_cast<__m128i*>(q + 32 + 16 * h),
                        _mm_and_si128(_mm_srli_epi16(raw, 4), mask));
      }
      for (int s = 0; s < 2; ++s, y += 32) {
        uint8_t sc, m;
        q4k_scale_min(2 * p + s, b[i].scales, &sc, &m);
        const __m256 scale = _mm256_set1_ps(d * float(sc));
        const __m256 min = _mm256_set1_ps(dmin * float(m));
        for (int l = 0; l < 32; l += 8) {
          _mm256_storeu_ps(y + l,
                           _mm256_sub_ps(_mm256_mul_ps(scale, u8x8_to_f32(q + 32 * s + l)), min));
        }
      }
    }
  }
}

void deq_q6_k(const void* src, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ6_K*>(src);
  const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
  const __m256i off = _mm256_set1_epi32(32);
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const float d = half_to_float(b[i].d);
    alignas(32) uint8_t q[256];
    for (int half = 0; half < 2; ++half) {
      const __m256i ql0 = load32(b[i].ql + 64 * half);
      const __m256i ql1 = load32(b[i].ql + 64 * half + 32);
      const __m256i qh = load32(b[i].qh + 32 * half);
      auto* out = reinterpret_cast<__m256i*>(q + 128 * half);
      _mm256_store_si256(out + 0, _mm256_or_si256(_mm256_and_si256(ql0, m4),
                                                  _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30)));
      _mm256_store_si256(out + 1, _mm256_or_si256(_mm256_and_si256(ql1, m4),
                                                  _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30)));
      _mm256_store_si256(out + 2, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                                                  _mm256_and_si256(qh, m30)));
      _mm256_store_si256(out + 3, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                                  _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30)));
    }
    for (int g = 0; g < 16; ++g, y += 16) {
      const __m256 s = _mm256_set1_ps(d * float(b[i].scales[g]));
      for (int l = 0; l < 16; l += 8) {
        const __m256i v = _mm256_sub_epi32(
            _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + 16 * g + l))),
            off);
        _mm256_storeu_ps(y + l, _mm256_mul_ps(s, _mm256_cvtepi32_ps(v)));
      }
    }
  }
}

void deq_f32(const void* src, float* y, int64_t n) { std::memcpy(y, src, size_t(n) * 4); }

}  // namespace

DequantRowFn dequant_row_avx2(DType t) {
  switch (t) {
    case DType::f32:
      return deq_f32;
    case DType::f16:
      return deq_f16;
    case DType::bf16:
      return deq_bf16;
    case DType::q8_0:
      return deq_q8_0;
    case DType::q4_0:
      return deq_q4_0;
    case DType::q5_0:
      return deq_q5<false>;
    case DType::q5_1:
      return deq_q5<true>;
    case DType::q5_k:
      return deq_q5_k;
    case DType::q4_k:
      return deq_q4_k;
    case DType::q6_k:
      return deq_q6_k;
  }
  return nullptr;
}

}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else

namespace rc::kernels {
DequantRowFn dequant_row_avx2(DType t) { return dequant_row_fn(t, SimdLevel::scalar); }
}  // namespace rc::kernels

#endif
