// Reference conversions between fp32 and every storage type (dtype.h).
//
// dequantize_row is the definition of what a weight means: every backend's
// matmul and get_rows must agree with it. quantize_row is simple
// round-to-nearest (no importance matrix, no scale search): it exists to
// write test weights and test GGUFs, and only promises that its output has
// the exact GGUF block layout and that dequantize(quantize(x)) is within half
// a quantization step of x per element (documented bounds in the tests).
// n must be a multiple of block_elems(t); src/dst are row_bytes(t, n) bytes.
#pragma once

#include <cstdint>

#include "dtype.h"

namespace rc::kernels {

void dequantize_row(DType t, const void* src, float* dst, int64_t n);
void quantize_row(DType t, const float* src, void* dst, int64_t n);

}  // namespace rc::kernels
