// Row conversions to fp32 for the hot paths (prefill weight tiles,
// embedding rows). Every level gives results bit-identical to
// dequantize_row (quant.h), which defines what the weights mean: the same
// products in the same order, never fused.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "simd-level.h"

namespace rc::kernels {

using DequantRowFn = void (*)(const void* src, float* dst, int64_t n);
DequantRowFn dequant_row_fn(DType t, SimdLevel level);

// The AVX2 table; call only when best_simd_level() allows it.
DequantRowFn dequant_row_avx2(DType t);

}  // namespace rc::kernels
