#include "kv-cache.cuh"

namespace rc::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void kv_store_kernel(float* k_dst, float* v_dst, const float* k, const float* v,
                                const int32_t* slots, int kv_dim) {
  const int i = blockIdx.x;
  const int64_t to = int64_t(slots[i]) * kv_dim, from = int64_t(i) * kv_dim;
  for (int c = threadIdx.x; c < kv_dim; c += blockDim.x) {
    k_dst[to + c] = k[from + c];
    v_dst[to + c] = v[from + c];
  }
}

// blockIdx.x: pair, blockIdx.y: array (2 * layer + K/V).
__global__ void copy_pages_kernel(float* base, int64_t layer_floats, int64_t page_floats,
                                  const int32_t* src, const int32_t* dst) {
  const int i = blockIdx.x;
  float* arr = base + int64_t(blockIdx.y) * layer_floats;
  const float* from = arr + int64_t(src[i]) * page_floats;
  float* to = arr + int64_t(dst[i]) * page_floats;
  if (from == to) return;
  for (int64_t c = threadIdx.x; c < page_floats; c += blockDim.x) to[c] = from[c];
}

}  // namespace

void launch_kv_store(const LaunchCtx& ctx, float* k_dst, float* v_dst, const float* k,
                     const float* v, const int32_t* slots, int n, int kv_dim) {
  if (n <= 0) return;
  kv_store_kernel<<<n, kThreads, 0, ctx.stream>>>(k_dst, v_dst, k, v, slots, kv_dim);
  ctx.check_launch("kv_store");
}

void launch_copy_pages(const LaunchCtx& ctx, float* base, int64_t layer_floats, int n_layers,
                       int64_t page_floats, const int32_t* src, const int32_t* dst, int n) {
  if (n <= 0) return;
  const dim3 grid(unsigned(n), unsigned(2 * n_layers));
  copy_pages_kernel<<<grid, kThreads, 0, ctx.stream>>>(base, layer_floats, page_floats, src, dst);
  ctx.check_launch("copy_pages");
}

}  // namespace rc::kernels::cuda
