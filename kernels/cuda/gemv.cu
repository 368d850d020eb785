#include "gemv.cuh"

#include "dequant.cuh"

namespace rc::kernels::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr int kUnroll = 4;  // segments in flight per lane: more bytes requested per warp

// One warp per output row; lane l decodes segments l, l + 32, ... and dots
// each with the NT token rows of x (x is small and shared by all warps, so
// it stays in L1/L2).
template <DType T, int NT>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp)
    gemv_kernel(const uint8_t* __restrict__ w, int64_t row_bytes, int64_t rows, int64_t K,
                const float* __restrict__ x, int n, const float* __restrict__ bias,
                float* __restrict__ y) {
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + warp;
  if (row >= rows) return;  // the whole warp leaves together
  const uint8_t* wr = w + row * row_bytes;
  const int segs = int(K / 8);
  float acc[NT];
#pragma unroll
  for (int t = 0; t < NT; ++t) acc[t] = 0.0f;

  for (int base = lane; base < segs; base += kWarp * kUnroll) {
    Seg8 g[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + kWarp * u < segs) decode_seg<T>(wr, base + kWarp * u, g[u]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + kWarp * u >= segs) continue;
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        if (t >= n) break;
        const float* xt = x + int64_t(t) * K;
        const float4 a = *reinterpret_cast<const float4*>(xt + g[u].e0);
        const float4 b = *reinterpret_cast<const float4*>(xt + g[u].e1);
        acc[t] += g[u].w[0] * a.x + g[u].w[1] * a.y + g[u].w[2] * a.z + g[u].w[3] * a.w +
                  g[u].w[4] * b.x + g[u].w[5] * b.y + g[u].w[6] * b.z + g[u].w[7] * b.w;
      }
    }
  }
#pragma unroll
  for (int t = 0; t < NT; ++t) acc[t] = warp_sum(acc[t]);
  if (lane == 0) {
    const float b = bias ? bias[row] : 0.0f;
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      if (t < n) y[int64_t(t) * rows + row] = acc[t] + b;
    }
  }
}

// Float weights whose rows are not whole segments (or not 16-byte aligned).
__global__ void __launch_bounds__(kWarpsPerBlock* kWarp)
    gemv_scalar_kernel(DType type, const uint8_t* __restrict__ w, int64_t row_bytes, int64_t rows,
                       int64_t K, const float* __restrict__ x, int n,
                       const float* __restrict__ bias, float* __restrict__ y) {
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + warp;
  if (row >= rows) return;
  const uint8_t* wr = w + row * row_bytes;
  float acc[kGemvGroup];
#pragma unroll
  for (int t = 0; t < kGemvGroup; ++t) acc[t] = 0.0f;
  for (int64_t k = lane; k < K; k += kWarp) {
    const float wk = load_float_elem(type, wr, k);
#pragma unroll
    for (int t = 0; t < kGemvGroup; ++t) {
      if (t < n) acc[t] += wk * x[int64_t(t) * K + k];
    }
  }
#pragma unroll
  for (int t = 0; t < kGemvGroup; ++t) acc[t] = warp_sum(acc[t]);
  if (lane == 0) {
    const float b = bias ? bias[row] : 0.0f;
    for (int t = 0; t < n; ++t) y[int64_t(t) * rows + row] = acc[t] + b;
  }
}

template <DType T>
void launch_typed(const LaunchCtx& ctx, const void* w, int64_t rows, int64_t K, const float* x,
                  int n, const float* bias, float* y) {
  const unsigned grid = unsigned(ceil_div(rows, kWarpsPerBlock));
  const int threads = kWarpsPerBlock * kWarp;
  const auto* wb = static_cast<const uint8_t*>(w);
  const int64_t rb = row_bytes(T, K);
  if (n == 1) {
    gemv_kernel<T, 1><<<grid, threads, 0, ctx.stream>>>(wb, rb, rows, K, x, n, bias, y);
  } else if (n == 2) {
    gemv_kernel<T, 2><<<grid, threads, 0, ctx.stream>>>(wb, rb, rows, K, x, n, bias, y);
  } else if (n <= 4) {
    gemv_kernel<T, 4><<<grid, threads, 0, ctx.stream>>>(wb, rb, rows, K, x, n, bias, y);
  } else {
    gemv_kernel<T, 8><<<grid, threads, 0, ctx.stream>>>(wb, rb, rows, K, x, n, bias, y);
  }
}

void launch_group(const LaunchCtx& ctx, DType type, const void* w, int64_t rows, int64_t K,
                  const float* x, int n, const float* bias, float* y) {
  const bool x_aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0;
  if (is_float_type(type) && (K % 8 != 0 || !seg_aligned(type, w) || !x_aligned)) {
    gemv_scalar_kernel<<<unsigned(ceil_div(rows, kWarpsPerBlock)), kWarpsPerBlock * kWarp, 0,
                         ctx.stream>>>(type, static_cast<const uint8_t*>(w), row_bytes(type, K),
                                       rows, K, x, n, bias, y);
    return;
  }
  if (!seg_aligned(type, w) || !x_aligned) {
    ctx.fail(std::string("gemv: misaligned ") + dtype_name(type) + " weight or activations");
    return;
  }
  switch (type) {
    case DType::f32:
      return launch_typed<DType::f32>(ctx, w, rows, K, x, n, bias, y);
    case DType::f16:
      return launch_typed<DType::f16>(ctx, w, rows, K, x, n, bias, y);
    case DType::bf16:
      return launch_typed<DType::bf16>(ctx, w, rows, K, x, n, bias, y);
    case DType::q8_0:
      return launch_typed<DType::q8_0>(ctx, w, rows, K, x, n, bias, y);
    case DType::q4_0:
      return launch_typed<DType::q4_0>(ctx, w, rows, K, x, n, bias, y);
    case DType::q4_k:
      return launch_typed<DType::q4_k>(ctx, w, rows, K, x, n, bias, y);
    case DType::q5_0:
      return launch_typed<DType::q5_0>(ctx, w, rows, K, x, n, bias, y);
    case DType::q5_1:
      return launch_typed<DType::q5_1>(ctx, w, rows, K, x, n, bias, y);
    case DType::q5_k:
      return launch_typed<DType::q5_k>(ctx, w, rows, K, x, n, bias, y);
    case DType::q6_k:
      return launch_typed<DType::q6_k>(ctx, w, rows, K, x, n, bias, y);
  }
}

}  // namespace

void launch_gemv(const LaunchCtx& ctx, DType type, const void* w, int64_t rows, int64_t K,
                 const float* x, int n, const float* bias, float* y) {
  if (n <= 0 || rows <= 0) return;
  for (int t0 = 0; t0 < n; t0 += kGemvGroup) {
    const int nt = n - t0 < kGemvGroup ? n - t0 : kGemvGroup;
    launch_group(ctx, type, w, rows, K, x + int64_t(t0) * K, nt, bias, y + int64_t(t0) * rows);
    if (!ctx.check_launch("gemv")) return;
  }
}

}  // namespace rc::kernels::cuda
