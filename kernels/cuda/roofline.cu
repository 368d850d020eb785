#include "roofline.cuh"

#include <cuda_fp16.h>

#include <algorithm>

#include "cuda-common.cuh"

namespace rc::kernels::cuda {
namespace {

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

__global__ void fill_half_kernel(__half* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    p[i] = __float2half(float((i * 7) % 13) * 0.01f - 0.06f);
  }
}

bool ok(cudaError_t e, const char* what, std::string* error) {
  if (e == cudaSuccess) return true;
  if (error) *error = std::string(what) + ": " + cudaGetErrorString(e);
  return false;
}

// Milliseconds of the best of `iters` runs of f, timed with events on stream.
template <typename F>
float best_ms(cudaStream_t stream, int iters, F f, std::string* error) {
  cudaEvent_t a = nullptr, b = nullptr;
  if (!ok(cudaEventCreate(&a), "cudaEventCreate", error) ||
      !ok(cudaEventCreate(&b), "cudaEventCreate", error)) {
    if (a) cudaEventDestroy(a);
    return -1.0f;
  }
  float best = -1.0f;
  f();  // warm-up
  for (int i = 0; i < iters; ++i) {
    cudaEventRecord(a, stream);
    f();
    cudaEventRecord(b, stream);
    if (!ok(cudaEventSynchronize(b), "roofline run", error)) break;
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, a, b);
    if (best < 0.0f || ms < best) best = ms;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

}  // namespace

double measure_copy_gbs(cudaStream_t stream, size_t bytes, int iters, std::string* error) {
  const int64_t n = int64_t(bytes / 16);
  void *src = nullptr, *dst = nullptr;
  if (!ok(cudaMalloc(&src, size_t(n) * 16), "copy buffer", error)) return 0.0;
  if (!ok(cudaMalloc(&dst, size_t(n) * 16), "copy buffer", error)) {
    cudaFree(src);
    return 0.0;
  }
  cudaMemsetAsync(src, 1, size_t(n) * 16, stream);
  int sms = 1;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const float ms = best_ms(
      stream, iters,
      [&] {
        copy_kernel<<<sms * 8, 512, 0, stream>>>(static_cast<const float4*>(src),
                                                 static_cast<float4*>(dst), n);
      },
      error);
  cudaFree(src);
  cudaFree(dst);
  return ms > 0.0f ? 2.0 * double(n) * 16 / (double(ms) * 1e-3) / 1e9 : 0.0;
}

double measure_fp16_gemm_tflops(cublasHandle_t handle, cudaStream_t stream, int m, int iters,
                                std::string* error) {
  const int64_t elems = int64_t(m) * m;
  __half *a = nullptr, *b = nullptr, *c = nullptr;
  if (!ok(cudaMalloc(&a, size_t(elems) * 2), "gemm buffer", error)) return 0.0;
  if (!ok(cudaMalloc(&b, size_t(elems) * 2), "gemm buffer", error) ||
      !ok(cudaMalloc(&c, size_t(elems) * 2), "gemm buffer", error)) {
    cudaFree(a);
    cudaFree(b);
    return 0.0;
  }
  fill_half_kernel<<<1024, 256, 0, stream>>>(a, elems);
  fill_half_kernel<<<1024, 256, 0, stream>>>(b, elems);
  cublasSetStream(handle, stream);
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  const float ms = best_ms(
      stream, iters,
      [&] {
        const cublasStatus_t s = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a,
                                              CUDA_R_16F, m, b, CUDA_R_16F, m, &zero, c, CUDA_R_16F,
                                              m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (s != CUBLAS_STATUS_SUCCESS) st = s;
      },
      error);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  if (st != CUBLAS_STATUS_SUCCESS) {
    if (error) *error = std::string("cublasGemmEx: ") + cublasGetStatusString(st);
    return 0.0;
  }
  return ms > 0.0f ? 2.0 * double(m) * m * m / (double(ms) * 1e-3) / 1e12 : 0.0;
}

}  // namespace rc::kernels::cuda
