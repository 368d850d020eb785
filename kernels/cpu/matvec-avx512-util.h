// Helpers shared by the AVX-512 matvec kernels (matvec-avx512.cpp,
// matvec-avx512-kquant.cpp). Include only inside an AVX-512 region
// (simd-avx512-begin.h).
#pragma once

#include <cstdint>

namespace rc::kernels::avx512 {
namespace {

inline __m512i load64(const void* p) { return _mm512_loadu_si512(p); }
inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Software prefetch this many bytes ahead of the weight stream. The
// hardware prefetchers stop at 4 KiB page boundaries (mmapped weights are in
// 4 KiB pages), so one core's DRAM stream is much faster with it
// (kernel-bench --decode-core shows it; 4-16 KiB all help, 16 KiB most).
// The 32-element kernels fetch into L1; the K-quant kernels, which read
// four rows' runs in turn, into L2, which kernel-bench --decode-core
// measured faster from DRAM for them (and slower for Q8_0).
constexpr int64_t kPrefetchBytes = 16384;
inline void prefetch(const void* p) {
  _mm_prefetch(static_cast<const char*>(p) + kPrefetchBytes, _MM_HINT_T0);
}
inline void prefetch_l2(const void* p) {
  _mm_prefetch(static_cast<const char*>(p) + kPrefetchBytes, _MM_HINT_T1);
}
inline __m512i join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
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

// Lane k: the exact sum of v[k]'s sixteen int32 lanes, as fp32 (rounded
// as float(int32_t) rounds).
inline __m128 lane_sums4(const __m512i v[4]) {
  const __m512i u = quad_sums(v);
  const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(u), _mm512_extracti64x4_epi64(u, 1));
  return _mm_cvtepi32_ps(_mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
}

}  // namespace
}  // namespace rc::kernels::avx512
