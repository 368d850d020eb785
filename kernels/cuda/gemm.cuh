// Prefill matmul through cuBLAS: y[n][rows] = x[n][K] * W^T for many tokens.
//
//   F32 weights:        cublasSgemm, fp32 throughout (no TF32: the default
//                       math mode), so it matches the reference to 1e-5.
//   F16 / BF16 weights: x converted to the weight's type, cublasGemmEx on
//                       tensor cores with fp32 accumulation and output.
//   Block types (Q8_0, Q4_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K):
//                       x converted to fp16; W dequantized to fp16 in row
//                       chunks of at most kDequantChunkElems into scratch,
//                       one cublasGemmEx per chunk. BF16 goes this way too
//                       on devices without bf16 tensor cores (sm < 80);
//                       it needs K % 8 == 0 there (the caller uses the GEMV
//                       otherwise).
// The 16-bit activation rounding (relative 2^-11 fp16, 2^-8 bf16) is what
// separates these results from the reference; tests allow 1e-2.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "cuda-common.cuh"
#include "dtype.h"

namespace rc::kernels::cuda {

inline constexpr int64_t kDequantChunkElems = int64_t(32) << 20;  // 64 MiB of fp16

// Device scratch of the GEMM path, owned by the backend and grown on demand.
struct GemmScratch {
  void* act16 = nullptr;  // >= n * K * 2 bytes: x in 16-bit
  void* w16 = nullptr;    // >= gemm_w16_bytes(...): a dequantized chunk of W
};

// Scratch bytes the GEMM of this shape needs.
int64_t gemm_act16_bytes(int64_t n, int64_t K);
// bf16_native: the device has bf16 tensor cores (sm >= 80).
int64_t gemm_w16_bytes(DType type, int64_t rows, int64_t K, bool bf16_native);

// W [rows][K] of `type` (device), x [n][K], y [n][rows]; bias is added by
// the caller. `handle` is bound to ctx.stream.
void launch_gemm(const LaunchCtx& ctx, cublasHandle_t handle, const GemmScratch& scratch,
                 DType type, const void* w, int64_t rows, int64_t K, const float* x, int n,
                 float* y, bool bf16_native);

// cuBLAS status as text, for error messages.
const char* cublas_status_text(cublasStatus_t s);

}  // namespace rc::kernels::cuda
