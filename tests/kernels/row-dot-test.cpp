// The AVX2 row dots (row-dot-avx2.cpp) against the portable ones
// (row-dot-scalar.cpp, the oracle for one weight row with the same 8-bit
// activations), for every weight type: quantized random rows at block
// counts around the kernels' 4-block and 256-element steps, and saturated
// rows (every quant bit set, the largest scales, activations at +-127),
// where a 16-bit partial sum that could overflow would show. Both sides add
// exact integer sums per block, so they differ only by fp32 rounding.
// Skipped on CPUs without AVX2.
#include <gtest/gtest.h>

#include <cstring>

#include "cpu/act-quant.h"
#include "cpu/quant-blocks.h"
#include "cpu/row-dot.h"
#include "kernel-test-util.h"

namespace rc::kernels {
namespace {

using test::expect_close;

class RowDot : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    if (best_simd_level() != SimdLevel::avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  }
};

std::vector<int64_t> block_counts() { return {1, 2, 3, 4, 5, 7, 8, 9, 11, 22}; }

std::vector<uint8_t> act_bytes(DType t, const std::vector<float>& x) {
  const ActFormat f = act_format(t);
  std::vector<uint8_t> q(
      size_t(f == ActFormat::f32 ? int64_t(x.size()) * 4 : act_row_bytes(f, int64_t(x.size()))));
  quantize_act(f, x.data(), q.data(), int64_t(x.size()));
  return q;
}

// The avx2 dot of one row and sum_k |w_k| |x_hat_k|, the scale of its rounding.
void expect_matches_scalar(DType t, const uint8_t* row, const std::vector<float>& x,
                           const std::string& what) {
  const int64_t K = int64_t(x.size());
  const std::vector<uint8_t> act = act_bytes(t, x);
  std::vector<float> w(static_cast<size_t>(K)), xq(static_cast<size_t>(K));
  dequantize_row(t, row, w.data(), K);
  if (act_format(t) == ActFormat::f32) {
    xq = x;
  } else {
    dequantize_act(act_format(t), act.data(), xq.data(), K);
  }
  double s = 0.0;
  for (int64_t k = 0; k < K; ++k) s += std::fabs(double(w[size_t(k)]) * xq[size_t(k)]);
  const float got = row_dot_avx2(t)(row, act.data(), K);
  const float want = row_dot_scalar(t)(row, act.data(), K);
  const float scale = float(s);
  expect_close(&got, &want, &scale, 1, 1e-5, what);
}

TEST_P(RowDot, MatchesScalarOnRandomRows) {
  const DType t = GetParam();
  uint32_t seed = 7;
  for (int64_t blocks : block_counts()) {
    const int64_t K = blocks * (block_elems(t) == 1 ? 32 : block_elems(t));
    for (int rep = 0; rep < 4; ++rep) {
      const test::OwnedWeight ow = test::make_weight(t, 1, K, seed++);
      const std::vector<float> x = test::random_vec(size_t(K), seed++, 2.0f);
      expect_matches_scalar(t, ow.bytes.data(), x,
                            std::string(dtype_name(t)) + " K " + std::to_string(K));
    }
  }
}

TEST_P(RowDot, MatchesScalarOnSaturatedRows) {
  const DType t = GetParam();
  if (act_format(t) == ActFormat::f32) GTEST_SKIP() << "float weights have no integer sums";
  for (int64_t blocks : block_counts()) {
    const int64_t K = blocks * block_elems(t);
    for (bool negative_q8 : {false, true}) {
      std::vector<uint8_t> row(static_cast<size_t>(row_bytes(t, K)));
      const int64_t bb = row_bytes(t, block_elems(t));
      for (int64_t i = 0; i < blocks; ++i)
        test::saturate_block(t, row.data() + i * bb, negative_q8);
      // Activations at 127 (all one sign, the largest sums) and at +-127.
      for (int pattern = 0; pattern < 3; ++pattern) {
        std::vector<float> x(static_cast<size_t>(K));
        for (int64_t k = 0; k < K; ++k) {
          x[size_t(k)] = pattern == 0 ? 1.0f : pattern == 1 ? -1.0f : (k / 3) % 2 ? 1.0f : -1.0f;
        }
        expect_matches_scalar(t, row.data(), x,
                              std::string(dtype_name(t)) + " saturated K " + std::to_string(K) +
                                  " pattern " + std::to_string(pattern) +
                                  (negative_q8 ? " negative" : ""));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, RowDot, ::testing::ValuesIn(test::all_dtypes()),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace rc::kernels
