// Writes into and copies within the device KV page pool.
//
// Pool layout (one allocation): array a = 2 * layer + (0 for K, 1 for V) is
// `layer_floats` floats at base + a * layer_floats; slot s of an array is
// its row [s][kv_dim]; page p is rows [p * page_size, (p + 1) * page_size).
#pragma once

#include <cstdint>

#include "cuda-common.cuh"

namespace rc::kernels::cuda {

// k_dst/v_dst: the layer's K and V arrays. Row i of k and v goes to slot
// slots[i]. slots is device memory and has been range-checked by the caller.
void launch_kv_store(const LaunchCtx& ctx, float* k_dst, float* v_dst, const float* k,
                     const float* v, const int32_t* slots, int n, int kv_dim);

// Copies page src[i] -> dst[i] in every one of the 2 * n_layers arrays.
// src/dst are device memory. All pairs are copied concurrently: the caller
// launches pair by pair when a later pair reads a page an earlier one writes.
void launch_copy_pages(const LaunchCtx& ctx, float* base, int64_t layer_floats, int n_layers,
                       int64_t page_floats, const int32_t* src, const int32_t* dst, int n);

}  // namespace rc::kernels::cuda
