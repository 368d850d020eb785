#include "kv-cache.cuh"
#include "kv-elem.cuh"

namespace rc::kernels::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void kv_store_kernel(T* k_dst, T* v_dst, const float* k, const float* v,
                                const int32_t* slots, int kv_dim) {
  const int i = blockIdx.x;
  const int64_t to = int64_t(slots[i]) * kv_dim, from = int64_t(i) * kv_dim;
  for (int c = threadIdx.x; c < kv_dim; c += blockDim.x) {
    kv_store1(k_dst + to + c, k[from + c]);
    kv_store1(v_dst + to + c, v[from + c]);
  }
}

// blockIdx.x: pair, blockIdx.y: array (2 * layer + K/V). Pages are copied
// as 32-bit words whatever the element type (a page row is a multiple of
// 4 elements, so of 4 bytes).
__global__ void copy_pages_kernel(uint32_t* base, int64_t layer_words, int64_t page_words,
                                  const int32_t* src, const int32_t* dst) {
  const int i = blockIdx.x;
  uint32_t* arr = base + int64_t(blockIdx.y) * layer_words;
  const uint32_t* from = arr + int64_t(src[i]) * page_words;
  uint32_t* to = arr + int64_t(dst[i]) * page_words;
  if (from == to) return;
  for (int64_t c = threadIdx.x; c < page_words; c += blockDim.x) to[c] = from[c];
}

}  // namespace

void launch_kv_store(const LaunchCtx& ctx, DType type, void* k_dst, void* v_dst, const float* k,
                     const float* v, const int32_t* slots, int n, int kv_dim) {
  if (n <= 0) return;
  const bool known = with_kv_type(type, [&](auto tag) {
    using T = decltype(tag);
    kv_store_kernel<T><<<n, kThreads, 0, ctx.stream>>>(static_cast<T*>(k_dst),
                                                       static_cast<T*>(v_dst), k, v, slots, kv_dim);
  });
  if (!known) {
    ctx.fail("kv_store: not a KV pool type");
    return;
  }
  ctx.check_launch("kv_store");
}

void launch_copy_pages(const LaunchCtx& ctx, void* base, int64_t layer_bytes, int n_layers,
                       int64_t page_bytes, const int32_t* src, const int32_t* dst, int n) {
  if (n <= 0) return;
  const dim3 grid(unsigned(n), unsigned(2 * n_layers));
  copy_pages_kernel<<<grid, kThreads, 0, ctx.stream>>>(static_cast<uint32_t*>(base),
                                                       layer_bytes / 4, page_bytes / 4, src, dst);
  ctx.check_launch("copy_pages");
}

}  // namespace rc::kernels::cuda
