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

// y[0 .. dim) = x / rms(x) * w for one row, the sum of squares in double
// (the sum of 4096 squares in fp32 would already differ from the reference
// in the 6th digit); y may alias x.
using RmsNormRowFn = void (*)(const float* x, const float* w, float* y, int dim, float eps);
RmsNormRowFn rmsnorm_row_fn(SimdLevel level);

void rmsnorm_row_scalar(const float* x, const float* w, float* y, int dim, float eps);
void rmsnorm_row_avx2(const float* x, const float* w, float* y, int dim, float eps);

// dst[i] = src[i] as fp16, rounded to nearest even (fp16.h's f32_to_fp16,
// which quantize_row uses: the same bits) over [0, count). The KV store's
// conversion: a library call per element without F16C.
using F16RowFn = void (*)(const float* src, uint16_t* dst, int64_t count);
F16RowFn f16_row_fn(SimdLevel level);

void f16_row_scalar(const float* src, uint16_t* dst, int64_t count);
void f16_row_avx2(const float* src, uint16_t* dst, int64_t count);

}  // namespace rc::kernels
