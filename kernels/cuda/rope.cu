#include "rope.cuh"

namespace rc::kernels::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxPairs = 512;  // n_rot <= 1024

// One block per row: the row's cos/sin table (n_rot / 2 entries) is built
// once in shared memory and used by every head.
__global__ void rope_kernel(float* x, const int32_t* pos, const double* freq, int n_heads,
                            int head_dim, int n_rot, bool neox) {
  __shared__ double cs[kMaxPairs], sn[kMaxPairs];
  const int i = blockIdx.x, half = n_rot / 2;
  const double p = double(pos[i]);
  for (int j = threadIdx.x; j < half; j += blockDim.x) sincos(p * freq[j], &sn[j], &cs[j]);
  __syncthreads();
  float* row = x + int64_t(i) * n_heads * head_dim;
  for (int t = threadIdx.x; t < n_heads * half; t += blockDim.x) {
    const int h = t / half, j = t % half;
    float* v = row + int64_t(h) * head_dim;
    const int a = neox ? j : 2 * j;
    const int b = neox ? j + half : 2 * j + 1;
    const double x0 = v[a], x1 = v[b];
    v[a] = float(x0 * cs[j] - x1 * sn[j]);
    v[b] = float(x0 * sn[j] + x1 * cs[j]);
  }
}

}  // namespace

void launch_rope(const LaunchCtx& ctx, float* x, const int32_t* pos, const double* freq, int n,
                 int n_heads, int head_dim, int n_rot, bool neox_halves) {
  if (n <= 0) return;
  if (n_rot <= 0 || n_rot % 2 != 0 || n_rot > head_dim || n_rot / 2 > kMaxPairs) {
    ctx.fail("rope: unsupported n_rot " + std::to_string(n_rot) + " for head_dim " +
             std::to_string(head_dim));
    return;
  }
  rope_kernel<<<n, kThreads, 0, ctx.stream>>>(x, pos, freq, n_heads, head_dim, n_rot, neox_halves);
  ctx.check_launch("rope");
}

}  // namespace rc::kernels::cuda
