// Shared helpers of the kernel tests: deterministic random data, weights in
// any storage type, and the SIMD levels this machine can run.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
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
