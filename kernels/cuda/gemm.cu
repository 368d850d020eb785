#include "gemm.cuh"

#include <algorithm>

#include "dequant.cuh"
#include "elementwise.cuh"

namespace rc::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// out[r][K] (fp16) = rows [0, n_rows) of w, one thread per segment.
template <DType T>
__global__ void dequant_f16_kernel(const uint8_t* __restrict__ w, int64_t row_bytes, int64_t K,
                                   int64_t n_segs, __half* __restrict__ out) {
  const int64_t segs_per_row = K / 8;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n_segs;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / segs_per_row;
    Seg8 g;
    decode_seg<T>(w + r * row_bytes, int(i % segs_per_row), g);
    __half* o = out + r * K;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      o[g.e0 + k] = __float2half_rn(g.w[k]);
      o[g.e1 + k] = __float2half_rn(g.w[4 + k]);
    }
  }
}

void launch_dequant_f16(const LaunchCtx& ctx, DType type, const void* w, int64_t n_rows, int64_t K,
                        __half* out) {
  const int64_t n_segs = n_rows * (K / 8);
  const unsigned grid = unsigned(std::min<int64_t>(ceil_div(n_segs, kThreads), 65535));
  const auto* wb = static_cast<const uint8_t*>(w);
  const int64_t rb = row_bytes(type, K);
  switch (type) {
    case DType::bf16:  // devices without bf16 tensor cores (sm < 80)
      dequant_f16_kernel<DType::bf16><<<grid, kThreads, 0, ctx.stream>>>(wb, rb, K, n_segs, out);
      break;
    case DType::q8_0:
      dequant_f16_kernel<DType::q8_0><<<grid, kThreads, 0, ctx.stream>>>(wb, rb, K, n_segs, out);
      break;
    case DType::q4_0:
      dequant_f16_kernel<DType::q4_0><<<grid, kThreads, 0, ctx.stream>>>(wb, rb, K, n_segs, out);
      break;
    case DType::q4_k:
      dequant_f16_kernel<DType::q4_k><<<grid, kThreads, 0, ctx.stream>>>(wb, rb, K, n_segs, out);
      break;
    case DType::q5_0:
      dequant_f16_kernel<DType::q5_0><<<grid, kThreads, 0, ctx.stream>>>(wb, rb, K, n_segs, out);
      break;
    case DType::q5_1:
      dequant_f16_kernel<DType::q5_1><<<grid, kThreads, 0, ctx.stream>>>(wb, rb, K, n_segs, out);
      break;
    case DType::q5_k:
      dequant_f16_kernel<DType::q5_k><<<grid, kThreads, 0, ctx.stream>>>(wb, rb, K, n_segs, out);
      break;
    case DType::q6_k:
      dequant_f16_kernel<DType::q6_k><<<grid, kThreads, 0, ctx.stream>>>(wb, rb, K, n_segs, out);
      break;
    default:
      ctx.fail("dequant_f16: not a block type");
      return;
  }
  ctx.check_launch("dequant_f16");
}

bool check_cublas(const LaunchCtx& ctx, cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  ctx.fail(std::string(what) + ": " + cublas_status_text(s));
  return false;
}

// y (column-major rows x n, ld ldy) = W16 (row-major [rows][K]) * x16^T.
bool gemm_16(const LaunchCtx& ctx, cublasHandle_t h, cudaDataType_t t, const void* w, int64_t rows,
             int64_t K, const void* x16, int n, float* y, int64_t ldy) {
  const float one = 1.0f, zero = 0.0f;
  return check_cublas(
      ctx,
      cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(rows), n, int(K), &one, w, t, int(K), x16, t,
                   int(K), &zero, y, CUDA_R_32F, int(ldy), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx");
}

int64_t chunk_rows(int64_t rows, int64_t K) {
  return std::max<int64_t>(1, std::min(rows, kDequantChunkElems / std::max<int64_t>(K, 1)));
}

}  // namespace

int64_t gemm_act16_bytes(int64_t n, int64_t K) { return n * K * 2; }

int64_t gemm_w16_bytes(DType type, int64_t rows, int64_t K, bool bf16_native) {
  if (type == DType::f32 || type == DType::f16 || (type == DType::bf16 && bf16_native)) return 0;
  return chunk_rows(rows, K) * K * 2;
}

const char* cublas_status_text(cublasStatus_t s) { return cublasGetStatusString(s); }

void launch_gemm(const LaunchCtx& ctx, cublasHandle_t handle, const GemmScratch& scratch,
                 DType type, const void* w, int64_t rows, int64_t K, const float* x, int n,
                 float* y, bool bf16_native) {
  if (n <= 0 || rows <= 0) return;
  if (type == DType::f32) {
    // Row-major y[n][rows] is column-major rows x n: y = W (op T of the
    // column-major K x rows view of W) * x (column-major K x n).
    const float one = 1.0f, zero = 0.0f;
    check_cublas(ctx,
                 cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, int(rows), n, int(K), &one,
                             static_cast<const float*>(w), int(K), x, int(K), &zero, y, int(rows)),
                 "cublasSgemm");
    return;
  }
  const bool native16 = type == DType::f16 || (type == DType::bf16 && bf16_native);
  const DType act = type == DType::bf16 && native16 ? DType::bf16 : DType::f16;
  launch_convert_f32(ctx, x, scratch.act16, act, int64_t(n) * K);
  if (native16) {
    gemm_16(ctx, handle, type == DType::f16 ? CUDA_R_16F : CUDA_R_16BF, w, rows, K, scratch.act16,
            n, y, rows);
    return;
  }
  if (!seg_aligned(type, w)) {
    ctx.fail(std::string("gemm: misaligned ") + dtype_name(type) + " weight");
    return;
  }
  const int64_t step = chunk_rows(rows, K);
  const auto* wb = static_cast<const uint8_t*>(w);
  const int64_t rb = row_bytes(type, K);
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    const int64_t nr = std::min(step, rows - r0);
    launch_dequant_f16(ctx, type, wb + r0 * rb, nr, K, static_cast<__half*>(scratch.w16));
    // Stream order keeps the next chunk's dequantize after this GEMM.
    if (!gemm_16(ctx, handle, CUDA_R_16F, scratch.w16, nr, K, scratch.act16, n, y + r0, rows)) {
      return;
    }
  }
}

}  // namespace rc::kernels::cuda
