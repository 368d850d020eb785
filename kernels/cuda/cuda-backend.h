// The CUDA backend (docs/architecture.md section 11), callable from plain C++: no CUDA
// type appears here, so the engine and the tests include it with g++.
//
// Memory: every buffer, weight and the KV pool live in device memory of
// device 0; the page tables, positions and slots the interface passes as
// host memory are copied to the device by the backend (once per step: a
// copy is skipped when the bytes did not change since the previous call).
//
// Execution: ops are queued in order on the backend's own stream and return
// before they run; download() (and argmax, which downloads) waits for them.
// So the host prepares the next op while the device works, and a buffer
// written by an op can be read by the next op without any call in between.
//
// Failure: nothing here aborts on a CUDA error. Creation fails with a
// one-line reason; alloc and make_kv_pool return nullptr when the device is
// full; an op that fails records the first error for take_error(). Invariant
// violations of the caller (a slot or page outside the pool) abort with
// RC_ASSERT, as in the reference backend.
//
// Numerics against the CPU reference backend (the tests' tolerances):
//   get_rows, kv_store (F32/F16/BF16 pools: both round to nearest even),
//   copy_pages, add: exact.
//   rmsnorm, rope, swiglu, attention: fp32 math, 1e-5 relative.
//   matmul, F32 weights: fp32 (GEMV or cuBLAS Sgemm without TF32), 1e-5.
//   matmul, F16/BF16/block weights: fp32 accumulation; up to 8 tokens (32
//     for block types) the weights are decoded exactly and x stays fp32;
//     beyond that x (and block weights) are rounded to fp16 (bf16 for BF16
//     weights on sm >= 80) for the tensor cores: 1e-2 relative.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backend.h"

namespace rc::kernels::cuda {

// Tokens up to which matmul uses the exact-decode GEMV instead of cuBLAS.
inline constexpr int kGemvMaxTokensFloat = 8;    // F32, F16, BF16 weights
inline constexpr int kGemvMaxTokensBlocks = 32;  // Q8_0, Q4_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K

// The backend on the first CUDA device: a stream, a cuBLAS handle and a
// small smoke test of the context. nullptr with *error set (one line) when
// there is no usable device, the driver is too old, or the device is out of
// memory.
std::unique_ptr<Backend> make_cuda_backend(std::string* error);

// True when `b` was made by make_cuda_backend.
bool is_cuda_backend(const Backend& b);

// Sampling on the device (see sampling.cuh for the exact rules).
struct DeviceSampling {
  float temperature = 1.0f;  // <= 0: argmax
  int top_k = 0;             // 0: off
  float top_p = 1.0f;        // >= 1: off
};

// ids[r] = the token drawn from logits[r][0 .. n) (device memory of `b`)
// with params[r] and the uniform number u[r] in [0, 1) (host arrays of
// `rows` entries; ids is host memory). False when `b` is not a CUDA backend
// or an error was recorded (take_error says which).
bool sample_rows(Backend& b, const float* logits, int rows, int n, const DeviceSampling* params,
                 const float* u, int32_t* ids);
// x[r][*] = softmax(x[r][*] / temperature) in place, device memory of `b`.
bool softmax_rows(Backend& b, float* x, int rows, int n, float temperature);

// Ceilings measured on device 0 (roofline.cuh): copy bandwidth over
// copy_bytes (read + write) and an m x m x m fp16 GEMM.
struct DeviceRoofline {
  std::string device;
  double copy_gbs = 0.0;
  double fp16_tflops = 0.0;
  std::string error;  // empty on success
};
DeviceRoofline measure_roofline(size_t copy_bytes, int gemm_m);

}  // namespace rc::kernels::cuda
