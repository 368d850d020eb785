// The fast CPU backend's class, for tests and benchmarks that need to pick
// the SIMD level; everyone else uses make_cpu_backend (cpu-backends.h).
#pragma once

#include <memory>

#include "backend.h"
#include "simd-level.h"

namespace rc::kernels {

// n_threads >= 1; level must be supported by this CPU (<= best_simd_level()).
std::unique_ptr<Backend> make_cpu_backend_at(int n_threads, SimdLevel level);

}  // namespace rc::kernels
