// Decode matmul: y[n][rows] = x[n][K] * W^T (+ bias) for a few tokens, with
// W in any storage type, decoded on the fly (dequant.cuh) and dotted in fp32.
// Memory-bound: every weight byte is read once per group of up to 8 tokens.
#pragma once

#include <cstdint>

#include "cuda-common.cuh"
#include "dtype.h"

namespace rc::kernels::cuda {

// Tokens one GEMV pass shares the weight reads across; more are done in groups.
inline constexpr int kGemvGroup = 8;

// W [rows][K] of `type` (device), x [n][K], bias [rows] or null, y [n][rows].
// Any n >= 1 (groups of kGemvGroup, each re-reading W).
void launch_gemv(const LaunchCtx& ctx, DType type, const void* w, int64_t rows, int64_t K,
                 const float* x, int n, const float* bias, float* y);

}  // namespace rc::kernels::cuda
