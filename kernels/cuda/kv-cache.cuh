// Writes into and copies within the device KV page pool.
//
// Pool layout (one allocation): array a = 2 * layer + (0 for K, 1 for V) is
// `layer_bytes` bytes at base + a * layer_bytes; slot s of an array is its
// row [s][kv_dim] of the pool's element type (f32, f16 or bf16); page p is
// rows [p * page_size, (p + 1) * page_size).
#pragma once

#include <cstdint>

#include "cuda-common.cuh"
#include "dtype.h"

namespace rc::kernels::cuda {

// k_dst/v_dst: the layer's K and V arrays of element type `type`. Row i of
// k and v (fp32) goes to slot slots[i], rounded to nearest even. slots is
// device memory and has been range-checked by the caller.
void launch_kv_store(const LaunchCtx& ctx, DType type, void* k_dst, void* v_dst, const float* k,
                     const float* v, const int32_t* slots, int n, int kv_dim);

// Copies page src[i] -> dst[i] in every one of the 2 * n_layers arrays.
// src/dst are device memory. All pairs are copied concurrently: the caller
// launches pair by pair when a later pair reads a page an earlier one writes.
// layer_bytes and page_bytes are multiples of 4.
void launch_copy_pages(const LaunchCtx& ctx, void* base, int64_t layer_bytes, int n_layers,
                       int64_t page_bytes, const int32_t* src, const int32_t* dst, int n);

}  // namespace rc::kernels::cuda
