// Sampling helpers on the device, so that only token ids cross the bus:
// argmax per row, softmax with temperature, and temperature / top-k / top-p
// sampling by inverse CDF with a host-drawn uniform number per row.
//
// Numbers: NaN-free logits are assumed (the model never produces NaN from
// finite weights; a NaN row gives an unspecified id in range).
#pragma once

#include <cstdint>

#include "cuda-common.cuh"

namespace rc::kernels::cuda {

// Per-row sampling parameters as 4 floats: temperature (<= 0: argmax),
// top_k (0: off; ties at the k-th value are all kept), top_p (>= 1: off;
// the smallest set of largest values whose mass reaches top_p, ties kept
// together), u in [0, 1) (the draw: the first id, in id order, where the
// kept probabilities' running sum exceeds u times their total).
inline constexpr int kSampleParamFloats = 4;

// out[r] = index of the largest x[r][*], first on ties. x, out: device.
void launch_argmax_rows(const LaunchCtx& ctx, const float* x, int rows, int n, int32_t* out);
// x[r][*] = softmax(x[r][*] / temperature), in place; temperature > 0.
void launch_softmax_rows(const LaunchCtx& ctx, float* x, int rows, int n, float temperature);
// out[r] = the token drawn for row r with params[r * 4 ..]. All device memory.
void launch_sample_rows(const LaunchCtx& ctx, const float* logits, int rows, int n,
                        const float* params, int32_t* out);

}  // namespace rc::kernels::cuda
