// RMSNorm: y[n][dim] = x / sqrt(mean(x^2) + eps) * w, per row; y may alias x.
#pragma once

#include "cuda-common.cuh"

namespace rc::kernels::cuda {

// x, w, y are device memory.
void launch_rmsnorm(const LaunchCtx& ctx, const float* x, const float* w, float* y, int n, int dim,
                    float eps);

}  // namespace rc::kernels::cuda
