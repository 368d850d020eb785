// Dot products of one weight row (in its storage type) with one activation
// row: the inner loop of matmul. One kernel per weight type and SIMD level.
#pragma once

#include <cstdint>

#include "act-quant.h"
#include "dtype.h"
#include "simd-level.h"

namespace rc::kernels {

// w: one row of `n` elements in the weight's storage type; act: the
// activation row in act_format(type) (act-quant.h). Never null for a
// supported type.
using RowDotFn = float (*)(const void* w, const void* act, int64_t n);
RowDotFn row_dot_fn(DType t, SimdLevel level);

// Per-level tables, indexed by row_dot_fn; the avx2 one must only be called
// when best_simd_level() allows it.
RowDotFn row_dot_scalar(DType t);
RowDotFn row_dot_avx2(DType t);

}  // namespace rc::kernels
