// The AVX-512 decode kernels (matvec.h) against the portable row dots
// (row-dot-scalar.cpp, the oracle for one weight row with the same 8-bit
// activations), for every quantized type, block counts around the 16-block
// groups, odd row counts, and through the backend's matmul at 1..4 threads
// (each row's result does not depend on the thread count); skipped on CPUs
// without AVX-512 VNNI. Float weights' decode (the tiles' blocks) against
// the tiles' own bits at every token count, on any AVX2 CPU.
#include <gtest/gtest.h>

#include <cstring>

#include "cpu/act-quant.h"
#include "cpu/cpu-backend.h"
#include "cpu/matvec.h"
#include "cpu/row-dot.h"
#include "kernel-test-util.h"

namespace rc::kernels {
namespace {

using test::expect_close;

class Matvec : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    if (!cpu_has_avx512_matvec()) GTEST_SKIP() << "no AVX-512 VNNI matvec on this CPU";
  }
};

std::vector<int64_t> test_cols(DType t) {
  switch (block_elems(t)) {
    case 32:  // blocks: one, a pair, 15/16/17 (groups of 16), 33, 64 + 3
      return {32, 64, 32 * 15, 32 * 16, 32 * 17, 32 * 33, 32 * 67};
    default:
      return {256, 512, 256 * 3, 256 * 8, 256 * 11, 256 * 67};  // 67: past a 64-block run
  }
}

// One activation row in the oracle's format: x quantized by quantize_act.
std::vector<uint8_t> oracle_act(DType t, const std::vector<float>& x, int64_t K) {
  const ActFormat f = act_format(t);
  std::vector<uint8_t> q(size_t(act_row_bytes(f, K)));
  quantize_act(f, x.data(), q.data(), K);
  return q;
}

// The kernel's y for `rows` rows of w (type t, K columns) against the
// scalar row dots with the same activation quants, within fp32 rounding of
// sum_k |w_k| |x_hat_k|.
void expect_matches_scalar(DType t, const uint8_t* w, int64_t rows, int64_t K,
                           const std::vector<float>& x, MatvecActBuffer& buf,
                           const std::string& what) {
  const std::vector<uint8_t> act = oracle_act(t, x, K);
  const MatvecAct& a = buf.prepare(t, x.data(), K, quantize_act_fn(best_simd_level()));
  const int64_t rb = row_bytes(t, K);
  std::vector<float> got(size_t(rows), NAN), want(static_cast<size_t>(rows)),
      scale(static_cast<size_t>(rows));
  matvec_avx512(t)(w, rb, rows, a, got.data());
  std::vector<float> wrow(static_cast<size_t>(K)), xq(static_cast<size_t>(K));
  dequantize_act(act_format(t), act.data(), xq.data(), K);
  const RowDotFn oracle = row_dot_scalar(t);
  for (int64_t r = 0; r < rows; ++r) {
    want[size_t(r)] = oracle(w + r * rb, act.data(), K);
    dequantize_row(t, w + r * rb, wrow.data(), K);
    double s = 0.0;
    for (int64_t k = 0; k < K; ++k) s += std::fabs(double(wrow[size_t(k)]) * xq[size_t(k)]);
    scale[size_t(r)] = float(s);
  }
  expect_close(got.data(), want.data(), scale.data(), size_t(rows), 1e-5, what);
}

TEST_P(Matvec, MatchesScalarRowDots) {
  const DType t = GetParam();
  ASSERT_NE(matvec_avx512(t), nullptr);
  uint32_t seed = 11;
  MatvecActBuffer buf;
  for (int64_t K : test_cols(t)) {
    for (int64_t rows : {1, 3, 37}) {
      const test::OwnedWeight ow = test::make_weight(t, rows, K, seed++);
      const std::vector<float> x = test::random_vec(size_t(K), seed++, 2.0f);
      expect_matches_scalar(
          t, ow.bytes.data(), rows, K, x, buf,
          std::string(dtype_name(t)) + " K " + std::to_string(K) + " rows " + std::to_string(rows));
    }
  }
}

// Every quant at its largest magnitude, the largest scales, activations at
// +-127: the largest integer sums, which the kernels' 16-bit packed sums
// (Q4_K, Q5_K, Q6_K) must hold exactly.
TEST_P(Matvec, MatchesScalarOnSaturatedRows) {
  const DType t = GetParam();
  MatvecActBuffer buf;
  const int64_t bb = row_bytes(t, block_elems(t));
  for (int64_t K : test_cols(t)) {
    for (bool negative : {false, true}) {
      const int64_t rows = 3, blocks = rows * K / block_elems(t);
      std::vector<uint8_t> w(size_t(blocks * bb));
      for (int64_t i = 0; i < blocks; ++i) test::saturate_block(t, w.data() + i * bb, negative);
      for (int pattern = 0; pattern < 3; ++pattern) {
        std::vector<float> x(static_cast<size_t>(K));
        for (int64_t k = 0; k < K; ++k) {
          x[size_t(k)] = pattern == 0 ? 1.0f : pattern == 1 ? -1.0f : (k / 3) % 2 ? 1.0f : -1.0f;
        }
        expect_matches_scalar(t, w.data(), rows, K, x, buf,
                              std::string(dtype_name(t)) + " saturated K " + std::to_string(K) +
                                  " pattern " + std::to_string(pattern) +
                                  (negative ? " negative" : ""));
      }
    }
  }
}

// Through the backend: a decode matmul (n = 1) gives the same bits at every
// thread count, and matches the row dots (matvec disabled) within rounding.
TEST_P(Matvec, BackendThreadsAndFallbackAgree) {
  const DType t = GetParam();
  ASSERT_NE(matvec_fn(t), nullptr);
  const int64_t K = block_elems(t) == 256 ? 256 * 9 : 32 * 35;
  const int64_t rows = 301;
  const test::OwnedWeight ow = test::make_weight(t, rows, K, 5);
  const std::vector<float> x = test::random_vec(size_t(K), 6, 2.0f);
  const std::vector<float> bias = test::random_vec(size_t(rows), 7);
  std::vector<float> first;
  for (int threads = 1; threads <= 4; ++threads) {
    auto be = make_cpu_backend_at(threads, SimdLevel::avx2);
    std::vector<float> y(size_t(rows), NAN);
    be->matmul(ow.w, bias.data(), x.data(), y.data(), 1);
    if (threads == 1) {
      first = y;
    } else {
      for (int64_t r = 0; r < rows; ++r) {
        ASSERT_EQ(y[size_t(r)], first[size_t(r)]) << dtype_name(t) << " threads " << threads;
      }
    }
  }
  set_matvec_enabled(false);
  ASSERT_EQ(matvec_fn(t), nullptr);
  auto be = make_cpu_backend_at(2, SimdLevel::avx2);
  std::vector<float> dots(size_t(rows), NAN);
  be->matmul(ow.w, bias.data(), x.data(), dots.data(), 1);
  set_matvec_enabled(true);
  std::vector<float> scale(static_cast<size_t>(rows));
  std::vector<float> wrow(static_cast<size_t>(K));
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row(t, ow.bytes.data() + r * row_bytes(t, K), wrow.data(), K);
    double s = std::fabs(bias[size_t(r)]);
    for (int64_t k = 0; k < K; ++k) s += std::fabs(double(wrow[size_t(k)]) * x[size_t(k)]);
    scale[size_t(r)] = float(s);
  }
  expect_close(first.data(), dots.data(), scale.data(), size_t(rows), 2e-5,
               std::string(dtype_name(t)) + " matvec vs row dots");
}

bool has_avx2_backend() { return best_simd_level() == SimdLevel::avx2; }

// Float weights decode (n = 1) through hdecode_avx2 with exactly the bits
// the tiles give the same token in a prefill of any size, and the same with
// the matvec path turned off (the tiles' own decode): at 1..3 threads, with
// a bias, K with a tail past the 8-wide steps and a row count that leaves a
// short last block of four.
TEST(FloatDecode, EqualsTheTilesBits) {
  if (!has_avx2_backend()) GTEST_SKIP() << "no AVX2 + FMA + F16C on this CPU";
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    ASSERT_NE(matvec_fn(t), nullptr) << dtype_name(t);
    const int64_t K = 1003, rows = 301;
    const int n = 5;
    const test::OwnedWeight ow = test::make_weight(t, rows, K, 21);
    const std::vector<float> x = test::random_vec(size_t(n * K), 22, 2.0f);
    const std::vector<float> bias = test::random_vec(size_t(rows), 23);
    for (int threads = 1; threads <= 3; ++threads) {
      auto be = make_cpu_backend_at(threads, SimdLevel::avx2);
      std::vector<float> prefill(size_t(n * rows), NAN);
      be->matmul(ow.w, bias.data(), x.data(), prefill.data(), n);
      for (int tok = 0; tok < n; ++tok) {
        std::vector<float> decode(size_t(rows), NAN), tiles(size_t(rows), NAN);
        be->matmul(ow.w, bias.data(), x.data() + tok * K, decode.data(), 1);
        set_matvec_enabled(false);
        be->matmul(ow.w, bias.data(), x.data() + tok * K, tiles.data(), 1);
        set_matvec_enabled(true);
        for (int64_t r = 0; r < rows; ++r) {
          ASSERT_EQ(decode[size_t(r)], prefill[size_t(tok * rows + r)])
              << dtype_name(t) << " token " << tok << " row " << r << " threads " << threads;
          ASSERT_EQ(decode[size_t(r)], tiles[size_t(r)])
              << dtype_name(t) << " token " << tok << " row " << r << " threads " << threads;
        }
      }
    }
  }
}

// A short step's kernel (2 .. kMatvecMaxTokens tokens, each weight row read
// once) gives every (row, token) exactly the one-token kernel's bits, for
// row counts around its four-row groups and block counts past its runs.
class MatvecShortSteps : public Matvec {};

TEST_P(MatvecShortSteps, EqualOneTokenAtATime) {
  const DType t = GetParam();
  ASSERT_NE(matvec_many_fn(t, 2), nullptr);
  uint32_t seed = 71;
  for (int64_t K : test_cols(t)) {
    for (int64_t rows : {1, 5, 38}) {
      const test::OwnedWeight ow = test::make_weight(t, rows, K, seed++);
      const int64_t rb = row_bytes(t, K);
      for (int tokens = 1; tokens <= kMatvecMaxTokens; ++tokens) {
        std::vector<MatvecActBuffer> bufs(static_cast<size_t>(tokens));
        std::vector<MatvecAct> acts;
        std::vector<float> want(size_t(tokens * rows), NAN), got(want.size(), NAN);
        for (int k = 0; k < tokens; ++k) {
          const std::vector<float> x = test::random_vec(size_t(K), seed++, 2.0f);
          acts.push_back(bufs[size_t(k)].prepare(t, x.data(), K, quantize_act_fn(SimdLevel::avx2)));
          matvec_avx512(t)(ow.bytes.data(), rb, rows, acts.back(), want.data() + k * rows);
        }
        matvec_many_fn(t, tokens)(ow.bytes.data(), rb, rows, acts.data(), got.data(), rows);
        ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
            << dtype_name(t) << " K " << K << " rows " << rows << " tokens " << tokens;
      }
    }
  }
}

// Backend::matmuls (q/k/v and gate/up of a decode step, fused into one
// region loop over all their rows) gives each output exactly the bits of its
// own matmul, with biases, row counts that split grains across outputs, and
// 1..3 threads.
void expect_fused_equals_one_each(const DType (&types)[4], int64_t K) {
  const int64_t rows[] = {67, 16, 33, 5};
  std::vector<test::OwnedWeight> ws;
  std::vector<std::vector<float>> biases;
  for (int i = 0; i < 4; ++i) {
    ws.push_back(test::make_weight(types[i], rows[i], K, 40 + i));
    biases.push_back(test::random_vec(size_t(rows[i]), 50 + i));
  }
  const std::vector<float> x = test::random_vec(size_t(K), 60, 2.0f);
  for (int threads = 1; threads <= 3; ++threads) {
    auto be = make_cpu_backend_at(threads, SimdLevel::avx2);
    std::vector<std::vector<float>> one(4), fused(4);
    std::vector<Backend::MatmulOut> outs;
    for (int i = 0; i < 4; ++i) {
      one[size_t(i)].assign(size_t(rows[i]), NAN);
      fused[size_t(i)].assign(size_t(rows[i]), NAN);
      const float* bias = i % 2 ? biases[size_t(i)].data() : nullptr;
      be->matmul(ws[size_t(i)].w, bias, x.data(), one[size_t(i)].data(), 1);
      outs.push_back({&ws[size_t(i)].w, bias, fused[size_t(i)].data()});
    }
    be->matmuls(outs, x.data(), 1);
    for (int i = 0; i < 4; ++i) {
      for (int64_t r = 0; r < rows[i]; ++r) {
        ASSERT_EQ(fused[size_t(i)][size_t(r)], one[size_t(i)][size_t(r)])
            << dtype_name(types[i]) << " output " << i << " row " << r << " threads " << threads;
      }
    }
  }
}

// Weights of mixed types, as Q4_K_M's Q4_K q/k and Q6_K v.
TEST(MatvecFused, QuantizedMatmulsEqualOneMatmulEach) {
  if (!cpu_has_avx512_matvec()) GTEST_SKIP() << "no AVX-512 VNNI matvec on this CPU";
  expect_fused_equals_one_each({DType::q4_k, DType::q4_k, DType::q6_k, DType::q8_0}, 256 * 3);
}

TEST(MatvecFused, FloatMatmulsEqualOneMatmulEach) {
  if (!has_avx2_backend()) GTEST_SKIP() << "no AVX2 + FMA + F16C on this CPU";
  expect_fused_equals_one_each({DType::f16, DType::f16, DType::bf16, DType::f32}, 1003);
}

// The quantized types: float weights have FloatDecode's tests.
std::vector<DType> quantized_dtypes() {
  std::vector<DType> out;
  for (DType t : test::all_dtypes()) {
    if (act_format(t) != ActFormat::f32) out.push_back(t);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(QuantizedTypes, Matvec, ::testing::ValuesIn(quantized_dtypes()),
                         [](const ::testing::TestParamInfo<DType>& i) {
                           return std::string(dtype_name(i.param));
                         });
// The types with short-step kernels (matvec.h).
INSTANTIATE_TEST_SUITE_P(KQuants, MatvecShortSteps,
                         ::testing::Values(DType::q4_k, DType::q5_k, DType::q6_k),
                         [](const ::testing::TestParamInfo<DType>& i) {
                           return std::string(dtype_name(i.param));
                         });

}  // namespace
}  // namespace rc::kernels
