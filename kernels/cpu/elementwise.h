// Element-wise kernels with a SIMD variant (the others are plain loops in
// cpu-backend.cpp that the compiler vectorises on its own).
#pragma once

#include <cstdint>

#include "simd-level.h"

namespace rc::kernels {

// out[i] = silu(gate[i]) * up[i] over [0, count); out may alias gate.
using SwigluFn = void (*)(const float* gate, const float* up, float* out, int64_t count);
SwigluFn swiglu_fn(SimdLevel level);

void swiglu_scalar(const float* gate, const float* up, float* out, int64_t count);
void swiglu_avx2(const float* gate, const float* up, float* out, int64_t count);

}  // namespace rc::kernels
