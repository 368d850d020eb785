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
// SIMD dot products chosen at run time (AVX2+FMA+F16C, else scalar), Q8
// activations with integer dot products for quantized weights, and
// single-threaded OpenBLAS sgemm per worker for prefill. Sets OpenBLAS to one
// thread process-wide, since it is called from the pool's threads.
std::unique_ptr<Backend> make_cpu_backend(int n_threads);

}  // namespace rc::kernels
