// Opens a region of a translation unit compiled for AVX2 + FMA + F16C while
// the rest of the binary stays baseline x86-64. Include it after every other
// header (so no inline function or template instantiation from a header is
// compiled for AVX2 and then shared with baseline code through the linker),
// put only file-local code in the region, and close it with
// simd-avx2-end.h. Callers must check best_simd_level() first.
// No include guard: a file may open the region once.
#if defined(__x86_64__) || defined(__i386__)
#define RC_HAVE_AVX2_REGION 1
#include <immintrin.h>
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
#endif
