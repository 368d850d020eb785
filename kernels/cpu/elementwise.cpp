#include "elementwise.h"

#include <cmath>

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

}  // namespace rc::kernels
