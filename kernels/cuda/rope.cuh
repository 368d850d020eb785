// Rotary position embedding in place on x[n][n_heads * head_dim]: pair j of
// every head of row i turns by pos[i] * freq[j] (adjacent pairs (2j, 2j+1)
// for llama, halves (j, j + n_rot/2) for NEOX/qwen2); dims >= n_rot stay.
#pragma once

#include <cstdint>

#include "cuda-common.cuh"

namespace rc::kernels::cuda {

// x, pos and freq are device memory; freq holds the n_rot / 2 frequencies of
// rope_freqs() (llama3 scaling already applied) in double. Angles and the
// rotation are computed in double like the reference: positions reach
// 1e5 and more, where an fp32 angle would be off by ~1e-2 rad.
void launch_rope(const LaunchCtx& ctx, float* x, const int32_t* pos, const double* freq, int n,
                 int n_heads, int head_dim, int n_rot, bool neox_halves);

}  // namespace rc::kernels::cuda
