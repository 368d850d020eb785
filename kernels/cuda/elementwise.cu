#include "elementwise.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

namespace rc::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// Grid-stride loops: the grid is capped, large counts loop.
int grid_for(int64_t count) { return int(std::min<int64_t>(ceil_div(count, kThreads), 65535)); }

__global__ void swiglu_kernel(const float* gate, const float* up, float* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float g = gate[i];
    // expf (not __expf): ~2 ulp, which keeps the op within 1e-5 relative.
    out[i] = g / (1.0f + expf(-g)) * up[i];
  }
}

__global__ void add_kernel(float* y, const float* x, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    y[i] += x[i];
  }
}

__global__ void add_bias_kernel(float* y, const float* bias, int64_t count, int64_t cols) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    y[i] += bias[i % cols];
  }
}

__global__ void to_f16_kernel(const float* src, __half* dst, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    dst[i] = __float2half_rn(src[i]);
  }
}

__global__ void to_bf16_kernel(const float* src, __nv_bfloat16* dst, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    dst[i] = __float2bfloat16_rn(src[i]);
  }
}

}  // namespace

void launch_swiglu(const LaunchCtx& ctx, const float* gate, const float* up, float* out,
                   int64_t count) {
  if (count <= 0) return;
  swiglu_kernel<<<grid_for(count), kThreads, 0, ctx.stream>>>(gate, up, out, count);
  ctx.check_launch("swiglu");
}

void launch_add(const LaunchCtx& ctx, float* y, const float* x, int64_t count) {
  if (count <= 0) return;
  add_kernel<<<grid_for(count), kThreads, 0, ctx.stream>>>(y, x, count);
  ctx.check_launch("add");
}

void launch_add_bias(const LaunchCtx& ctx, float* y, const float* bias, int n, int64_t cols) {
  const int64_t count = int64_t(n) * cols;
  if (count <= 0) return;
  add_bias_kernel<<<grid_for(count), kThreads, 0, ctx.stream>>>(y, bias, count, cols);
  ctx.check_launch("add_bias");
}

void launch_convert_f32(const LaunchCtx& ctx, const float* src, void* dst, DType to,
                        int64_t count) {
  if (count <= 0) return;
  if (to == DType::f16) {
    to_f16_kernel<<<grid_for(count), kThreads, 0, ctx.stream>>>(src, static_cast<__half*>(dst),
                                                                count);
  } else if (to == DType::bf16) {
    to_bf16_kernel<<<grid_for(count), kThreads, 0, ctx.stream>>>(
        src, static_cast<__nv_bfloat16*>(dst), count);
  } else {
    ctx.fail("convert_f32: target must be F16 or BF16");
    return;
  }
  ctx.check_launch("convert_f32");
}

}  // namespace rc::kernels::cuda
