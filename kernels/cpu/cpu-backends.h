// Factories of the two CPU backends. Both use host memory (alloc is
// aligned_alloc, upload/download are memcpy) and the same host KV pool, so
// buffers and pools of one can be passed to the other.
#pragma once

#include <memory>

#include "backend.h"

namespace rc::kernels {

// The oracle: every op written the obvious way, single-threaded, double
// accumulation. Slow; tests and debugging compare against it.
std::unique_ptr<Backend> make_reference_backend();

// The fast CPU backend: a persistent pool of n_threads threads (the calling
// thread counts as one; n_threads <= 0 means the number of online CPUs),
// SIMD kernels chosen at run time (AVX2+FMA+F16C, else portable code;
// RADIXCHAT_CPU_SIMD=scalar forces the latter), integer dot products for
// quantized weights, and, at the scalar level only, single-threaded
// OpenBLAS sgemm per pool thread for prefill (n >= 8 tokens). Sets OpenBLAS
// to one thread process-wide, since it is called from the pool's threads.
//
// Numerics: float weights match the reference to fp32 rounding; quantized
// weights multiply 8-bit-rounded activations, as GGML does (contract in
// act-quant.h), in decode and prefill alike. At the AVX2 level a token's
// logits are the same bits however its prompt was chunked, cached or
// batched, on any thread count and page size (cpu-matmul.h,
// cpu-attention.h; docs/architecture.md section 7).
std::unique_ptr<Backend> make_cpu_backend(int n_threads);

}  // namespace rc::kernels
