// Element-wise ops on device fp32 buffers: SwiGLU, residual add, bias add,
// and the fp32 -> fp16/bf16 activation conversion the tensor-core GEMMs need.
#pragma once

#include <cstdint>

#include "cuda-common.cuh"
#include "dtype.h"

namespace rc::kernels::cuda {

// out[i] = silu(gate[i]) * up[i]; out may alias gate (or up).
void launch_swiglu(const LaunchCtx& ctx, const float* gate, const float* up, float* out,
                   int64_t count);
// y[i] += x[i]
void launch_add(const LaunchCtx& ctx, float* y, const float* x, int64_t count);
// y[t][c] += bias[c] for t < n, c < cols.
void launch_add_bias(const LaunchCtx& ctx, float* y, const float* bias, int n, int64_t cols);
// dst[i] = src[i] rounded to nearest even in `to` (F16 or BF16; 2 bytes each).
void launch_convert_f32(const LaunchCtx& ctx, const float* src, void* dst, DType to, int64_t count);

}  // namespace rc::kernels::cuda
