// Opens a region of a translation unit compiled for AVX2 + FMA + F16C +
// AVX-512 F/BW/VL/VNNI, like simd-avx2-begin.h (same rules: include it after
// every other header, only file-local code inside, close with
// simd-avx512-end.h). Callers check cpu_has_avx512_matvec() (matvec.h)
// before calling into the region.
// No include guard: a file may open the region once.
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define RC_HAVE_AVX512_REGION 1
#include <immintrin.h>
#if defined(__clang__)
#pragma clang attribute push(                                                      \
    __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni"))), \
    apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni")
#endif
#endif
