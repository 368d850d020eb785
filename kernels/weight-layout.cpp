#include "weight-layout.h"

#include <cstring>

#include "rc-assert.h"

namespace rc::kernels {

bool fits_rows4x8(const Weight& w) {
  const bool float_type = w.type == DType::f16 || w.type == DType::bf16 || w.type == DType::f32;
  return float_type && w.layout == WeightLayout::rows && w.rows > 0 && w.rows % 4 == 0 &&
         w.cols % 8 == 0;
}

Weight write_weight_layout(const Weight& w, WeightLayout layout, void* dst) {
  RC_ASSERT(w.layout == WeightLayout::rows);
  const int64_t rb = row_bytes(w.type, w.cols);
  const auto* src = static_cast<const uint8_t*>(w.data);
  auto* out = static_cast<uint8_t*>(dst);
  if (layout == WeightLayout::rows) {
    std::memcpy(out, src, size_t(w.rows * rb));
  } else {
    RC_ASSERT(fits_rows4x8(w));
    const int64_t elem = rb / w.cols, step = 8 * elem;
    for (int64_t r = 0; r < w.rows; ++r) {
      for (int64_t k = 0; k < w.cols; k += 8) {
        std::memcpy(out + rows4x8_offset(r, k, w.cols) * elem, src + r * rb + k * elem,
                    size_t(step));
      }
    }
  }
  Weight v = w;
  v.data = dst;
  v.layout = layout;
  return v;
}

}  // namespace rc::kernels
