// Embedding gather: out[n][cols] = rows ids[i] of a weight table in any
// storage type, converted to fp32. Bit-identical to dequantize_row.
#pragma once

#include <cstdint>

#include "cuda-common.cuh"
#include "dtype.h"

namespace rc::kernels::cuda {

// ids and out are device memory. An id outside [0, rows) yields a row of
// NaN (the runner validates token ids before they get here; NaN makes a
// bug visible instead of reading out of bounds).
void launch_get_rows(const LaunchCtx& ctx, DType type, const void* table, int64_t rows,
                     int64_t cols, const int32_t* ids, float* out, int n);

}  // namespace rc::kernels::cuda
