// The AVX-512 read loop of the bandwidth probe (read-bandwidth.h): 512-bit
// loads with the decode kernels' 16 KiB software prefetch (matvec-avx512.cpp
// reads its weights this way, so the probe must too, or decode could beat it).
#include <cstddef>
#include <cstdint>

#include "simd-avx512-begin.h"

#if defined(RC_HAVE_AVX512_REGION)
namespace rc::kernels {

uint64_t fold_avx512(const uint8_t* p, size_t n) {
  __m512i a[4];
  for (auto& v : a) v = _mm512_setzero_si512();
  size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    for (int l = 0; l < 256; l += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(p + i + l + 16384), _MM_HINT_T0);
    }
    for (int j = 0; j < 4; ++j) {
      a[j] = _mm512_xor_si512(a[j], _mm512_loadu_si512(p + i + 64 * j));
    }
  }
  const __m512i x = _mm512_xor_si512(_mm512_xor_si512(a[0], a[1]), _mm512_xor_si512(a[2], a[3]));
  uint64_t r = uint64_t(_mm512_reduce_or_epi64(x));
  for (; i < n; ++i) r ^= p[i];
  return r;
}

}  // namespace rc::kernels
#include "simd-avx512-end.h"
#else
namespace rc::kernels {
uint64_t fold_avx512(const uint8_t*, size_t) { return 0; }  // never called off x86
}  // namespace rc::kernels
#endif
