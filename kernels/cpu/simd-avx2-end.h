// Closes the region opened by simd-avx2-begin.h.
#if defined(RC_HAVE_AVX2_REGION)
#if defined(__clang__)
#pragma clang attribute pop
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif
#endif
