// Ceilings the GPU benchmark reports against, measured in the same run:
// device memory bandwidth (a copy kernel: bytes read + bytes written per
// second) and dense fp16 tensor-core throughput (a large cublasGemmEx with
// fp16 inputs and fp32 accumulation).
#pragma once

#include <cublas_v2.h>

#include <cstddef>
#include <string>

namespace rc::kernels::cuda {

// Best of `iters` copies of `bytes` (rounded down to 16) on `stream`;
// GB/s counting read + write. 0 and *error set on failure.
double measure_copy_gbs(cudaStream_t stream, size_t bytes, int iters, std::string* error);
// Best of `iters` m x m x m fp16 GEMMs (fp32 accumulate) in TFLOP/s.
double measure_fp16_gemm_tflops(cublasHandle_t handle, cudaStream_t stream, int m, int iters,
                                std::string* error);

}  // namespace rc::kernels::cuda
