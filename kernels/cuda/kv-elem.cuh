// Element types of the device KV pool (f32, f16, bf16): loads that widen
// four elements to a float4, a narrowing store, and the dispatch from the
// pool's DType to the C++ type the kernels are instantiated with.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "dtype.h"

namespace rc::kernels::cuda {

// Four consecutive elements at p (16-byte aligned for float, 8-byte for
// the 16-bit types: head_dim and the column are multiples of 4).
__device__ __forceinline__ float4 kv_load4(const float* p) {
  return *reinterpret_cast<const float4*>(p);
}
__device__ __forceinline__ float4 kv_load4(const __half* p) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p);
  const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&raw.x));
  const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&raw.y));
  return make_float4(a.x, a.y, b.x, b.y);
}
__device__ __forceinline__ float4 kv_load4(const __nv_bfloat16* p) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p);
  const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
  const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
  return make_float4(a.x, a.y, b.x, b.y);
}

// Round to nearest even, as the CPU backends' kv_store.
__device__ __forceinline__ void kv_store1(float* p, float v) { *p = v; }
__device__ __forceinline__ void kv_store1(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void kv_store1(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}

// Calls f(T{}) with T the element type of a pool of type t; false when t is
// not a KV type (nothing is called).
template <typename F>
bool with_kv_type(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      f(float{});
      return true;
    case DType::f16:
      f(__half{});
      return true;
    case DType::bf16:
      f(__nv_bfloat16{});
      return true;
    default:
      return false;
  }
}

}  // namespace rc::kernels::cuda
