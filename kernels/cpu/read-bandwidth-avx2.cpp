// The AVX2 read loop of the bandwidth probe (read-bandwidth.h).
#include <cstddef>
#include <cstdint>

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
namespace rc::kernels {

// XOR of n bytes in 256-bit lanes: eight independent accumulators, two
// cache lines per iteration, so loads are the only bound. With `prefetch`,
// software prefetches 16 KiB ahead, as the decode kernels issue them.
uint64_t fold_avx2(const uint8_t* p, size_t n, bool prefetch) {
  __m256i a[8];
  for (auto& v : a) v = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    if (prefetch) {
      for (int l = 0; l < 256; l += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(p + i + l + 16384), _MM_HINT_T0);
      }
    }
    for (int j = 0; j < 8; ++j) {
      a[j] = _mm256_xor_si256(a[j],
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32 * j)));
    }
  }
  __m256i x = _mm256_xor_si256(
      _mm256_xor_si256(_mm256_xor_si256(a[0], a[1]), _mm256_xor_si256(a[2], a[3])),
      _mm256_xor_si256(_mm256_xor_si256(a[4], a[5]), _mm256_xor_si256(a[6], a[7])));
  uint64_t lanes[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), x);
  uint64_t r = lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3];
  for (; i < n; ++i) r ^= p[i];
  return r;
}

}  // namespace rc::kernels
#include "simd-avx2-end.h"
#else
namespace rc::kernels {
uint64_t fold_avx2(const uint8_t*, size_t, bool) { return 0; }  // never called off x86
}  // namespace rc::kernels
#endif
