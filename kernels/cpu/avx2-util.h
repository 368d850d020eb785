// Small AVX2 helpers shared by the kernels that are compiled inside an
// AVX2 region (simd-avx2-begin.h). Include only inside such a region.
#pragma once

#include <cstdint>
#include <cstring>

namespace rc::kernels::avx2 {
namespace {

inline float hsum(__m128 s) {
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float hsum(__m256 v) {
  return hsum(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
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

// 32 bytes from the 32 bits of h: byte k is 0xff when bit k is set, else 0.
inline __m256i bits_to_bytes(uint32_t h) {
  // Byte k takes byte k / 8 of h, then keeps only bit k % 8.
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(int(h)), _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                                   0x0101010101010101, 0x0000000000000000));
  const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

// The 32 5-bit quants (0..31) of a Q5_0 / Q5_1 block in element order, from
// its 32-bit qh and 16 nibble bytes (low nibbles are elements 0..15).
inline __m256i q5_unpack32(const uint8_t* qh, const uint8_t* qs) {
  uint32_t h;
  std::memcpy(&h, qh, 4);
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i nib =
      _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0f));
  return _mm256_or_si256(nib, _mm256_and_si256(bits_to_bytes(h), _mm256_set1_epi8(0x10)));
}

// Sums of adjacent products of 32 unsigned bytes u (< 128) and signed bytes
// s, as 8 int32 (each lane covers 4 consecutive bytes).
inline __m256i dot_u8_i8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}
// Same for two signed operands (w in [-127, 127]): |w| and sign-moved x.
inline __m256i dot_i8_i8(__m256i w, __m256i x) {
  return dot_u8_i8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
}

// e^x for eight floats (Cephes' expf: range reduction by ln 2 in two parts,
// degree-5 polynomial, scaling by 2^n in the exponent bits); within 2 ulp
// for |x| < 87, clamped beyond (e^-87 ~ 1e-38 is zero for a softmax).
inline __m256 exp_ps(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

}  // namespace
}  // namespace rc::kernels::avx2
