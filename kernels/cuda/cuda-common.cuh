// Shared device helpers of the CUDA kernels: warp reductions, ceil-div, and
// the launch context every op launcher receives.
//
// Error contract: launchers never abort and never throw. They queue work on
// ctx.stream and report a failed launch (or an unsupported shape) through
// ctx.fail(), which the backend turns into its take_error() string. Device
// faults surface at the backend's next synchronising call.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace rc::kernels::cuda {

inline constexpr int kWarp = 32;

// Where an op runs and where it reports failure. `error` is the backend's
// first-error slot: only the first failure is kept (later ones are usually
// consequences of it).
struct LaunchCtx {
  cudaStream_t stream = nullptr;
  std::string* error = nullptr;
  int sm_count = 1;

  void fail(const std::string& what) const {
    if (error && error->empty()) *error = what;
  }
  // Records a CUDA error with the op's name; returns true when `e` is success.
  bool check(cudaError_t e, const char* what) const {
    if (e == cudaSuccess) return true;
    fail(std::string(what) + ": " + cudaGetErrorString(e));
    return false;
  }
  // After a <<<>>> launch: configuration errors are reported at once.
  bool check_launch(const char* what) const { return check(cudaGetLastError(), what); }
};

__host__ __device__ constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

#ifdef __CUDACC__
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over a block of blockDim.x threads (a multiple of 32, at most 1024);
// every thread gets the result. `scratch` holds 32 floats of shared memory;
// the function synchronises the block, so all threads must call it.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int n_warps = blockDim.x / kWarp;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < n_warps ? scratch[lane] : 0.0f;
  return warp_sum(v);
}
#endif

}  // namespace rc::kernels::cuda
