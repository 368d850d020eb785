// qgemm.h tile kernels for AVX2: maddubs + madd.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "qgemm.h"
#include "quant-blocks.h"

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
#include "avx2-util.h"

namespace rc::kernels {

#define RC_QT_DOT_U8I8(acc, u, s) \
  _mm256_add_epi32((acc), _mm256_madd_epi16(_mm256_maddubs_epi16((u), (s)), _mm256_set1_epi16(1)))
#define RC_QT_MADD16(acc, p, s) _mm256_add_epi32((acc), _mm256_madd_epi16((p), (s)))
#include "qgemm-kernels.inc"
#undef RC_QT_DOT_U8I8
#undef RC_QT_MADD16

QTileFn qtile_avx2(DType t) { return qtile_table(t); }

}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else

namespace rc::kernels {
QTileFn qtile_avx2(DType) { return nullptr; }
}  // namespace rc::kernels

#endif
