#include "rmsnorm.cuh"

namespace rc::kernels::cuda {
namespace {

// One block per row. The sum of squares is fp32 per thread and then a tree
// over the block: relative error ~1e-7 for rows of a few thousand, well
// inside the 1e-5 the reference comparison allows.
__global__ void rmsnorm_kernel(const float* x, const float* w, float* y, int dim, float eps) {
  __shared__ float scratch[32];
  const float* xr = x + int64_t(blockIdx.x) * dim;
  float* yr = y + int64_t(blockIdx.x) * dim;
  float ss = 0.0f;
  for (int k = threadIdx.x; k < dim; k += blockDim.x) ss += xr[k] * xr[k];
  ss = block_sum(ss, scratch);
  const float inv = 1.0f / sqrtf(ss / float(dim) + eps);
  // Every thread has read all it needs of xr (its own elements) before
  // writing them, so y may alias x.
  for (int k = threadIdx.x; k < dim; k += blockDim.x) yr[k] = xr[k] * inv * w[k];
}

}  // namespace

void launch_rmsnorm(const LaunchCtx& ctx, const float* x, const float* w, float* y, int n, int dim,
                    float eps) {
  if (n <= 0 || dim <= 0) return;
  const int threads = dim >= 1024 ? 512 : 128;
  rmsnorm_kernel<<<n, threads, 0, ctx.stream>>>(x, w, y, dim, eps);
  ctx.check_launch("rmsnorm");
}

}  // namespace rc::kernels::cuda
