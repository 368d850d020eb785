// Writing a weight matrix in another WeightLayout (backend.h), for the host
// backends that read some matmul weights fastest in one of their own.
//
// rows4x8 puts each group of four rows' eight-element steps side by side, so
// the four rows that a float decode block (hgemm-avx2.cpp) reads at once
// are one forward stream through memory instead of four streams a row
// apart, while every (row, token) sum keeps its order and so its bits.
#pragma once

#include <cstdint>

#include "backend.h"

namespace rc::kernels {

// Whether w (a `rows` matrix) can be written as rows4x8: F16, BF16 or F32
// with rows % 4 == 0 and cols % 8 == 0.
bool fits_rows4x8(const Weight& w);

// Element offset of (row r, column k) of a rows4x8 matrix with `cols` columns.
inline int64_t rows4x8_offset(int64_t r, int64_t k, int64_t cols) {
  return (r / 4) * 4 * cols + (k / 8) * 32 + (r % 4) * 8 + k % 8;
}

// Writes w (layout `rows`) in `layout` to dst, which holds
// w.rows * row_bytes(w.type, w.cols) bytes, and returns the weight viewing
// dst. rows4x8 requires fits_rows4x8(w); `rows` is a plain copy.
Weight write_weight_layout(const Weight& w, WeightLayout layout, void* dst);

}  // namespace rc::kernels
