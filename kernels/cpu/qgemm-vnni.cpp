// qgemm.h tile kernels with VNNI dot instructions (vpdpbusd / vpdpwssd on
// 256-bit registers, AVX-512 VNNI + VL encoding: Ice Lake, Sapphire Rapids,
// Zen 4 and later). Same integer sums as qgemm-avx2.cpp, so the same bits.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "qgemm.h"
#include "quant-blocks.h"

// The region below is compiled for AVX2 + AVX-512 VNNI/VL; callers check
// cpu_has_vnni() first. Only file-local code lives in it (see
// simd-avx2-begin.h for why).
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define RC_HAVE_VNNI_REGION 1
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

#if defined(RC_HAVE_VNNI_REGION)
#include "avx2-util.h"

namespace rc::kernels {

#define RC_QT_DOT_U8I8(acc, u, s) _mm256_dpbusd_epi32((acc), (u), (s))
#define RC_QT_MADD16(acc, p, s) _mm256_dpwssd_epi32((acc), (p), (s))
#include "qgemm-kernels.inc"
#undef RC_QT_DOT_U8I8
#undef RC_QT_MADD16

QTileFn qtile_vnni(DType t) { return qtile_table(t); }

}  // namespace rc::kernels

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#else

namespace rc::kernels {
QTileFn qtile_vnni(DType) { return nullptr; }
}  // namespace rc::kernels

#endif
