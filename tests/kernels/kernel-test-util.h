// Shared helpers of the kernel tests: deterministic random data, weights in
// any storage type, and the SIMD levels this machine can run.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "cpu/quant-blocks.h"
#include "cpu/quant.h"
#include "cpu/simd-level.h"

namespace rc::kernels::test {

inline std::vector<float> random_vec(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A weight matrix quantized from random fp32 values, owning its bytes.
struct OwnedWeight {
  std::vector<uint8_t> bytes;
  Weight w;
};

inline OwnedWeight make_weight(DType t, int64_t rows, int64_t cols, uint32_t seed) {
  OwnedWeight o;
  const std::vector<float> src = random_vec(size_t(rows * cols), seed, 0.5f);
  const int64_t rb = row_bytes(t, cols);
  o.bytes.resize(size_t(rows * rb));
  for (int64_t r = 0; r < rows; ++r) {
    quantize_row(t, src.data() + r * cols, o.bytes.data() + r * rb, cols);
  }
  o.w = Weight{t, o.bytes.data(), rows, cols};
  return o;
}

// One block of type t with every quant at its largest magnitude and the
// largest sub-block scales (fp16 block scales 1.0): the largest integer
// sums a kernel's narrow partial sums must hold. `negative` takes the most
// negative quant where the type has signed or offset quants (Q8_0 -128,
// Q4_0 / Q5_0 / Q6_K all quant bits clear: -8, -16, -32), else the largest.
inline void saturate_block(DType t, uint8_t* b, bool negative) {
  constexpr uint16_t kOne = 0x3c00;  // fp16 1.0
  switch (t) {
    case DType::q8_0: {
      auto* q = reinterpret_cast<BlockQ8_0*>(b);
      q->d = kOne;
      std::memset(q->qs, negative ? 0x80 : 0x7f, sizeof(q->qs));  // -128 / 127
      return;
    }
    case DType::q4_k:
    case DType::q5_k: {
      std::memset(b, 0xff, size_t(row_bytes(t, block_elems(t))));
      std::memcpy(b, &kOne, 2);      // d
      std::memcpy(b + 2, &kOne, 2);  // dmin
      return;
    }
    case DType::q6_k: {
      auto* q = reinterpret_cast<BlockQ6_K*>(b);
      std::memset(b, negative ? 0x00 : 0xff, sizeof(*q));
      for (int j = 0; j < 16; ++j) q->scales[j] = int8_t(j % 2 ? -128 : 127);
      q->d = kOne;
      return;
    }
    default: {
      // Q4_0 / Q5_0 / Q5_1: every quant bit set (or clear), then the fp16
      // scale (and min) fields.
      const int64_t bytes = row_bytes(t, block_elems(t));
      std::memset(b, negative && t != DType::q5_1 ? 0x00 : 0xff, size_t(bytes));
      std::memcpy(b, &kOne, 2);
      if (t == DType::q5_1) std::memcpy(b + 2, &kOne, 2);
      return;
    }
  }
}

inline std::vector<SimdLevel> runnable_levels() {
  std::vector<SimdLevel> levels{SimdLevel::scalar};
  if (best_simd_level() == SimdLevel::avx2) levels.push_back(SimdLevel::avx2);
  return levels;
}

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> types{DType::f32,  DType::f16,  DType::bf16, DType::q8_0,
                                        DType::q4_0, DType::q5_0, DType::q5_1, DType::q4_k,
                                        DType::q5_k, DType::q6_k};
  return types;
}

inline float max_abs(const std::vector<float>& v) {
  float m = 0.0f;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Element-wise |got - want| <= rtol * scale[i]; reports the worst element.
inline void expect_close(const float* got, const float* want, const float* scale, size_t n,
                         double rtol, const std::string& what) {
  double worst = 0.0;
  size_t worst_i = 0;
  for (size_t i = 0; i < n; ++i) {
    const double err = std::fabs(double(got[i]) - double(want[i]));
    const double ratio = err / (rtol * std::max(double(scale[i]), 1e-30));
    if (!(ratio <= worst)) {  // also catches NaN
      worst = std::isnan(ratio) ? INFINITY : ratio;
      worst_i = i;
    }
  }
  EXPECT_LE(worst, 1.0) << what << ": element " << worst_i << " got " << got[worst_i] << " want "
                        << want[worst_i] << " tolerance " << rtol * scale[worst_i];
}

}  // namespace rc::kernels::test
