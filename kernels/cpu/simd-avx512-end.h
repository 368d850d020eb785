// Closes the region opened by simd-avx512-begin.h.
#if defined(RC_HAVE_AVX512_REGION)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
