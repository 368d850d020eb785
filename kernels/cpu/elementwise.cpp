#include "elementwise.h"

#include <cmath>

#include "fp16.h"

namespace rc::kernels {

void swiglu_scalar(const float* gate, const float* up, float* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

SwigluFn swiglu_fn(SimdLevel level) {
  return level == SimdLevel::avx2 ? swiglu_avx2 : swiglu_scalar;
}

void rmsnorm_row_scalar(const float* x, const float* w, float* y, int dim, float eps) {
  double ss = 0.0;
  for (int k = 0; k < dim; ++k) ss += double(x[k]) * double(x[k]);
  const float inv = float(1.0 / std::sqrt(ss / dim + double(eps)));
  for (int k = 0; k < dim; ++k) y[k] = x[k] * inv * w[k];
}

RmsNormRowFn rmsnorm_row_fn(SimdLevel level) {
  return level == SimdLevel::avx2 ? rmsnorm_row_avx2 : rmsnorm_row_scalar;
}

void f16_row_scalar(const float* src, uint16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = f32_to_fp16(src[i]);
}

F16RowFn f16_row_fn(SimdLevel level) {
  return level == SimdLevel::avx2 ? f16_row_avx2 : f16_row_scalar;
}

}  // namespace rc::kernels
