#include "sampling.cuh"

#include <climits>

namespace rc::kernels::cuda {
namespace {

constexpr int kThreads = 1024;

struct Best {
  float v;
  int i;
};

__device__ __forceinline__ Best better(Best a, Best b) {
  return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
}

// Block-wide argmax of x[0, n); every thread gets the result. scratch: 32
// floats and 32 ints of shared memory.
__device__ int block_argmax(const float* x, int n, float* sv, int* si) {
  Best b{-INFINITY, INT_MAX};
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    if (x[i] > b.v) b = Best{x[i], i};  // indices rise: keeps the first of equals
  }
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) {
    b = better(b, Best{__shfl_xor_sync(0xffffffffu, b.v, o), __shfl_xor_sync(0xffffffffu, b.i, o)});
  }
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  __syncthreads();
  if (lane == 0) {
    sv[warp] = b.v;
    si[warp] = b.i;
  }
  __syncthreads();
  b = lane < int(blockDim.x / kWarp) ? Best{sv[lane], si[lane]} : Best{-INFINITY, INT_MAX};
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) {
    b = better(b, Best{__shfl_xor_sync(0xffffffffu, b.v, o), __shfl_xor_sync(0xffffffffu, b.i, o)});
  }
  return b.i == INT_MAX ? 0 : b.i;  // every value -inf: the first, like the reference
}

__device__ float block_max(float v, float* scratch) {
  v = warp_max(v);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < int(blockDim.x / kWarp) ? scratch[lane] : -INFINITY;
  return warp_max(v);
}

// Order-preserving map of a float to uint32 (larger float, larger key).
__device__ __forceinline__ uint32_t order_key(float f) {
  const uint32_t b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__global__ void argmax_rows_kernel(const float* x, int n, int32_t* out) {
  __shared__ float sv[32];
  __shared__ int si[32];
  const int i = block_argmax(x + int64_t(blockIdx.x) * n, n, sv, si);
  if (threadIdx.x == 0) out[blockIdx.x] = i;
}

__global__ void softmax_rows_kernel(float* x, int n, float inv_t) {
  __shared__ float scratch[32];
  float* row = x + int64_t(blockIdx.x) * n;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, row[i]);
  m = block_max(m, scratch);
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float e = expf((row[i] - m) * inv_t);
    row[i] = e;
    s += e;
  }
  s = block_sum(s, scratch);
  const float inv = 1.0f / s;
  for (int i = threadIdx.x; i < n; i += blockDim.x) row[i] *= inv;
}

// Count (as float) or probability mass of the entries whose key >= t.
__device__ float mass_at_least(const float* row, int n, uint32_t t, float m, float inv_t,
                               bool count, float* scratch) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    if (order_key(row[i]) >= t) s += count ? 1.0f : expf((row[i] - m) * inv_t);
  }
  return block_sum(s, scratch);
}

// The largest key t >= lo with f(t) >= goal, for f falling in t (f(lo) >= goal).
template <typename F>
__device__ uint32_t largest_key(uint32_t lo, float goal, F f) {
  uint64_t a = lo, b = uint64_t(1) << 32;  // invariant: f(a) >= goal, f(b) < goal (b = 2^32: empty)
  while (b - a > 1) {
    const uint64_t mid = (a + b) / 2;
    if (f(uint32_t(mid)) >= goal) {
      a = mid;
    } else {
      b = mid;
    }
  }
  return uint32_t(a);
}

__global__ void sample_rows_kernel(const float* logits, int n, const float* params, int32_t* out) {
  __shared__ float scratch[32];
  __shared__ int si[32];
  __shared__ float chunk[kThreads];
  const float* row = logits + int64_t(blockIdx.x) * n;
  const float* pr = params + int64_t(blockIdx.x) * kSampleParamFloats;
  const float temperature = pr[0], top_p = pr[2], u = pr[3];
  const int top_k = int(pr[1]);
  if (!(temperature > 0.0f)) {
    const int i = block_argmax(row, n, scratch, si);
    if (threadIdx.x == 0) out[blockIdx.x] = i;
    return;
  }
  const float inv_t = 1.0f / temperature;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, row[i]);
  m = block_max(m, scratch);

  uint32_t tau = 0;  // kept: order_key(x) >= tau
  if (top_k > 0 && top_k < n) {
    tau = largest_key(0, float(top_k), [&](uint32_t t) {
      return mass_at_least(row, n, t, m, inv_t, true, scratch);
    });
  }
  if (top_p < 1.0f) {
    const float goal = top_p * mass_at_least(row, n, tau, m, inv_t, false, scratch);
    tau = largest_key(
        tau, goal, [&](uint32_t t) { return mass_at_least(row, n, t, m, inv_t, false, scratch); });
  }

  // Inverse CDF in id order: thread j owns ids [j * per, (j + 1) * per).
  const int per = int(ceil_div(n, blockDim.x));
  const int begin = threadIdx.x * per, end = min(n, begin + per);
  float s = 0.0f;
  int last = -1;
  for (int i = begin; i < end; ++i) {
    if (order_key(row[i]) >= tau) {
      s += expf((row[i] - m) * inv_t);
      last = i;
    }
  }
  chunk[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {  // exclusive prefix over 1024 chunk sums
    float run = 0.0f;
    for (int j = 0; j < int(blockDim.x); ++j) {
      const float c = chunk[j];
      chunk[j] = run;
      run += c;
    }
    scratch[0] = run;
  }
  __syncthreads();
  const float total = scratch[0];
  const float target = u * total;
  __shared__ int picked;
  __shared__ int last_kept;
  if (threadIdx.x == 0) {
    picked = INT_MAX;
    last_kept = -1;
  }
  __syncthreads();
  if (last >= 0) atomicMax(&last_kept, last);
  if (s > 0.0f && chunk[threadIdx.x] <= target && target < chunk[threadIdx.x] + s) {
    float run = chunk[threadIdx.x];
    for (int i = begin; i < end; ++i) {
      if (order_key(row[i]) < tau) continue;
      run += expf((row[i] - m) * inv_t);
      if (run > target) {
        atomicMin(&picked, i);
        break;
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    // Rounding can leave target at or past the last running sum: take the
    // last kept id then.
    out[blockIdx.x] = picked != INT_MAX ? picked : (last_kept >= 0 ? last_kept : 0);
  }
}

}  // namespace

void launch_argmax_rows(const LaunchCtx& ctx, const float* x, int rows, int n, int32_t* out) {
  if (rows <= 0 || n <= 0) return;
  argmax_rows_kernel<<<rows, kThreads, 0, ctx.stream>>>(x, n, out);
  ctx.check_launch("argmax");
}

void launch_softmax_rows(const LaunchCtx& ctx, float* x, int rows, int n, float temperature) {
  if (rows <= 0 || n <= 0) return;
  if (!(temperature > 0.0f)) {
    ctx.fail("softmax: temperature must be positive");
    return;
  }
  softmax_rows_kernel<<<rows, kThreads, 0, ctx.stream>>>(x, n, 1.0f / temperature);
  ctx.check_launch("softmax");
}

void launch_sample_rows(const LaunchCtx& ctx, const float* logits, int rows, int n,
                        const float* params, int32_t* out) {
  if (rows <= 0 || n <= 0) return;
  sample_rows_kernel<<<rows, kThreads, 0, ctx.stream>>>(logits, n, params, out);
  ctx.check_launch("sample");
}

}  // namespace rc::kernels::cuda
