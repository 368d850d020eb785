// Small AVX2 helpers shared by the kernels that are compiled inside an
// AVX2 region (simd-avx2-begin.h). Include only inside such a region.
#pragma once

namespace rc::kernels::avx2 {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float half_to_float(uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(int(h))));
}

// Eight fp32 from eight fp16 / bf16 at p.
inline __m256 load8_f16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 load8_bf16(const uint16_t* p) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Sums of adjacent products of 32 unsigned bytes u (< 128) and signed bytes
// s, as 8 int32 (each lane covers 4 consecutive bytes).
inline __m256i dot_u8_i8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}
// Same for two signed operands (w in [-127, 127]): |w| and sign-moved x.
inline __m256i dot_i8_i8(__m256i w, __m256i x) {
  return dot_u8_i8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
}

}  // namespace
}  // namespace rc::kernels::avx2
