// matmul and get_rows of the fast CPU backend against the reference, for
// every weight type, SIMD level, decode (n < 8) and prefill (sgemm) paths.
//
// Tolerances. Float weights: |fast - ref| <= 1e-5 * sum_k |w_k x_k| (fp32
// summation in a different order than the double reference). Quantized
// weights use 8-bit-rounded activations by contract (act-quant.h), so the
// oracle is the reference matmul of the same weights with x_hat =
// dequantize_act(quantize_act(x)), again within 1e-5 * sum |w x_hat|;
// and against the reference with the exact x, the difference is bounded by
// the activation rounding itself: sum_k |w_k| |x_k - x_hat_k| (+ the 1e-5).
#include <gtest/gtest.h>

#include <cstring>

#include "cpu/act-quant.h"
#include "cpu/cpu-backend.h"
#include "cpu/cpu-backends.h"
#include "cpu/row-dot.h"
#include "kernel-test-util.h"

namespace rc::kernels {
namespace {

using test::expect_close;

struct MatmulCase {
  DType type;
  SimdLevel level;
};

class Matmul : public ::testing::TestWithParam<MatmulCase> {};

std::vector<float> dequantized(const Weight& w) {
  std::vector<float> d(size_t(w.rows * w.cols));
  const int64_t rb = row_bytes(w.type, w.cols);
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, static_cast<const uint8_t*>(w.data) + r * rb, d.data() + r * w.cols,
                   w.cols);
  }
  return d;
}

std::vector<float> act_rounded(DType t, const std::vector<float>& x, int64_t K) {
  const ActFormat f = act_format(t);
  std::vector<float> out(x.size());
  std::vector<uint8_t> q(static_cast<size_t>(act_row_bytes(f, K)));
  for (size_t i = 0; i < x.size() / size_t(K); ++i) {
    quantize_act(f, x.data() + i * size_t(K), q.data(), K);
    dequantize_act(f, q.data(), out.data() + i * size_t(K), K);
  }
  return out;
}

TEST_P(Matmul, MatchesReference) {
  const auto [type, level] = GetParam();
  const bool quantized = act_format(type) != ActFormat::f32;
  const int64_t be = block_elems(type);
  const std::vector<int64_t> cols = be == 1    ? std::vector<int64_t>{67, 520}
                                    : be == 32 ? std::vector<int64_t>{96, 544}
                                               : std::vector<int64_t>{256, 768};
  auto ref = make_reference_backend();
  for (int threads : {1, 3}) {
    auto fast = make_cpu_backend_at(threads, level);
    uint32_t seed = 1;
    for (int64_t K : cols) {
      for (int64_t rows : {1, 37, 300}) {
        const test::OwnedWeight ow = test::make_weight(type, rows, K, seed++);
        const std::vector<float> wd = dequantized(ow.w);
        const std::vector<float> bias = test::random_vec(size_t(rows), seed++);
        for (int n : {1, 3, 8, 19}) {
          const std::vector<float> x = test::random_vec(size_t(n * K), seed++, 2.0f);
          const std::vector<float> xq = quantized ? act_rounded(type, x, K) : x;
          for (bool with_bias : {false, true}) {
            const float* b = with_bias ? bias.data() : nullptr;
            std::vector<float> got(size_t(n * rows), NAN), want(got.size()), exact(got.size());
            fast->matmul(ow.w, b, x.data(), got.data(), n);
            ref->matmul(ow.w, b, xq.data(), want.data(), n);
            ref->matmul(ow.w, b, x.data(), exact.data(), n);
            std::vector<float> scale(got.size()), bound(got.size());
            for (int t = 0; t < n; ++t) {
              for (int64_t r = 0; r < rows; ++r) {
                double s = 0.0, a = 0.0, sx = 0.0;
                for (int64_t k = 0; k < K; ++k) {
                  const double wk = std::fabs(wd[size_t(r * K + k)]);
                  s += wk * std::fabs(xq[size_t(t * K + k)]);
                  sx += wk * std::fabs(x[size_t(t * K + k)]);
                  a += wk * std::fabs(x[size_t(t * K + k)] - xq[size_t(t * K + k)]);
                }
                scale[size_t(t * rows + r)] = float(s);
                // expect_close multiplies by rtol: express the bound in units of it.
                bound[size_t(t * rows + r)] = float((a + 1e-5 * sx) / 1e-5);
              }
            }
            const std::string what = std::string(dtype_name(type)) + " " + simd_level_name(level) +
                                     " threads " + std::to_string(threads) + " K " +
                                     std::to_string(K) + " rows " + std::to_string(rows) + " n " +
                                     std::to_string(n) + (with_bias ? " bias" : "");
            expect_close(got.data(), want.data(), scale.data(), got.size(), 1e-5, what);
            expect_close(got.data(), exact.data(), bound.data(), got.size(), 1e-5,
                         what + " (vs exact activations)");
          }
        }
      }
    }
  }
}

// A token's result does not depend on how many tokens share the call,
// which the cache relies on: a prompt prefilled in one chunk or in many, or
// batched with other requests, gives the same logits. At the AVX2 level the
// same bits for every n (decode's matvec, the tiles, the token-lane
// kernels); at the scalar level (OpenBLAS for n >= 8) within rounding.
// Block counts that are not a multiple of the kernels' steps, and rows not a
// multiple of the tiles', exercise their tails.
TEST_P(Matmul, DecodeAndPrefillAgreePerToken) {
  const auto [type, level] = GetParam();
  const int64_t be = block_elems(type);
  // 256-element blocks: also past one of the decode kernels' 64-block runs.
  const std::vector<int64_t> cols = be == 256  ? std::vector<int64_t>{256 * 5, 256 * 67}
                                    : be == 32 ? std::vector<int64_t>{32 * 13}
                                               : std::vector<int64_t>{260};
  const int64_t rows = 61;
  auto fast = make_cpu_backend_at(2, level);
  for (const int64_t K : cols) {
    const test::OwnedWeight ow = test::make_weight(type, rows, K, 99);
    const int max_n = 19;
    const std::vector<float> x = test::random_vec(size_t(max_n * K), 98);
    std::vector<float> one(size_t(max_n * rows));
    for (int t = 0; t < max_n; ++t)
      fast->matmul(ow.w, nullptr, x.data() + t * K, one.data() + t * rows, 1);
    const std::vector<float> wd = dequantized(ow.w);
    for (int n = 2; n <= max_n; ++n) {
      std::vector<float> all(size_t(n * rows));
      fast->matmul(ow.w, nullptr, x.data(), all.data(), n);
      for (int t = 0; t < n; ++t) {
        const std::string what = std::string(dtype_name(type)) + " token " + std::to_string(t) +
                                 " of " + std::to_string(n) + " K " + std::to_string(K);
        if (level == SimdLevel::avx2) {
          EXPECT_EQ(std::memcmp(one.data() + t * rows, all.data() + t * rows, rows * sizeof(float)),
                    0)
              << what;
          continue;
        }
        std::vector<float> scale(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) {
          double s = 0.0;
          for (int64_t k = 0; k < K; ++k)
            s += std::fabs(wd[size_t(r * K + k)] * x[size_t(t * K + k)]);
          scale[size_t(r)] = float(s);
        }
        expect_close(one.data() + t * rows, all.data() + t * rows, scale.data(), size_t(rows), 1e-5,
                     what);
      }
    }
  }
}

TEST_P(Matmul, GetRowsIsDequantizeRow) {
  const auto [type, level] = GetParam();
  // Odd lengths for the float types exercise the SIMD tails.
  const int64_t K = block_elems(type) == 256 ? 512 : block_elems(type) == 32 ? 96 : 67;
  auto fast = make_cpu_backend_at(2, level);
  const test::OwnedWeight ow = test::make_weight(type, 50, K, 3);
  const std::vector<int32_t> ids{49, 0, 7, 7, 23};
  std::vector<float> got(ids.size() * size_t(K)), want(got.size());
  fast->get_rows(ow.w, ids.data(), got.data(), int(ids.size()));
  const int64_t rb = row_bytes(type, K);
  for (size_t i = 0; i < ids.size(); ++i) {
    dequantize_row(type, ow.bytes.data() + ids[i] * rb, want.data() + i * size_t(K), K);
  }
  EXPECT_EQ(got, want);
}

std::vector<MatmulCase> matmul_cases() {
  std::vector<MatmulCase> cases;
  for (DType t : test::all_dtypes()) {
    for (SimdLevel l : test::runnable_levels()) cases.push_back({t, l});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(TypesAndLevels, Matmul, ::testing::ValuesIn(matmul_cases()),
                         [](const auto& info) {
                           return std::string(dtype_name(info.param.type)) + "_" +
                                  simd_level_name(info.param.level);
                         });

}  // namespace
}  // namespace rc::kernels
