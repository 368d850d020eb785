// The backend's own matmul layout (backend.h WeightLayout::rows4x8,
// weight-layout.h): where write_weight_layout puts each element, which
// matrices may take it, and that every matmul path of the fast CPU backend
// gives a rows4x8 matrix exactly the bits it gives the same matrix in the
// `rows` layout (the oracle: the tiles' bits, tested against the reference
// kernels in qgemm-test.cpp and matvec-test.cpp), for F16/BF16/F32, token
// counts from decode to several 16-token groups, 1..3 threads, with and
// without a bias, and whatever the path switches say.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "cpu/cpu-backend.h"
#include "cpu/matvec.h"
#include "cpu/qgemm.h"
#include "kernel-test-util.h"
#include "weight-layout.h"

namespace rc::kernels {
namespace {

struct Relaid {
  std::vector<uint8_t> bytes;
  Weight w;
};

Relaid relaid(const Weight& w) {
  Relaid r;
  r.bytes.resize(size_t(w.rows * row_bytes(w.type, w.cols)));
  r.w = write_weight_layout(w, WeightLayout::rows4x8, r.bytes.data());
  return r;
}

bool has_avx2_backend() { return best_simd_level() == SimdLevel::avx2; }

TEST(WeightLayout, Rows4x8PutsEachGroupsStepsSideBySide) {
  // 8 rows x 16 columns of F32, element (r, k) = 100 r + k.
  std::vector<float> m(8 * 16);
  for (int r = 0; r < 8; ++r) {
    for (int k = 0; k < 16; ++k) m[size_t(r * 16 + k)] = float(100 * r + k);
  }
  const Weight w{DType::f32, m.data(), 8, 16};
  const Relaid out = relaid(w);
  EXPECT_EQ(out.w.layout, WeightLayout::rows4x8);
  EXPECT_EQ(out.w.rows, 8);
  EXPECT_EQ(out.w.cols, 16);
  std::vector<float> got(8 * 16);
  std::memcpy(got.data(), out.bytes.data(), got.size() * sizeof(float));
  // Group 0: row 0 k 0..7, row 1 k 0..7, row 2, row 3, then row 0 k 8..15, ...
  int i = 0;
  for (int g = 0; g < 2; ++g) {
    for (int s = 0; s < 2; ++s) {
      for (int j = 0; j < 4; ++j) {
        for (int e = 0; e < 8; ++e, ++i) {
          ASSERT_EQ(got[size_t(i)], float(100 * (4 * g + j) + 8 * s + e)) << "at " << i;
        }
      }
    }
  }
  for (int r = 0; r < 8; ++r) {
    for (int k = 0; k < 16; ++k) EXPECT_EQ(got[size_t(rows4x8_offset(r, k, 16))], m[size_t(r * 16 + k)]);
  }
}

TEST(WeightLayout, OnlyFloatMatricesOfWholeGroupsAndStepsFit) {
  EXPECT_TRUE(fits_rows4x8({DType::f16, nullptr, 8, 16}));
  EXPECT_TRUE(fits_rows4x8({DType::bf16, nullptr, 4, 8}));
  EXPECT_TRUE(fits_rows4x8({DType::f32, nullptr, 12, 2048}));
  EXPECT_FALSE(fits_rows4x8({DType::q8_0, nullptr, 8, 32}));
  EXPECT_FALSE(fits_rows4x8({DType::q4_k, nullptr, 8, 256}));
  EXPECT_FALSE(fits_rows4x8({DType::f16, nullptr, 6, 16}));   // rows % 4
  EXPECT_FALSE(fits_rows4x8({DType::f16, nullptr, 8, 1003}));  // cols % 8
  EXPECT_FALSE(fits_rows4x8({DType::f16, nullptr, 0, 16}));
  EXPECT_FALSE(fits_rows4x8({DType::f16, nullptr, 8, 16, WeightLayout::rows4x8}));
}

TEST(WeightLayout, CpuBackendAsksForRows4x8WhereTheTilesRun) {
  if (!has_avx2_backend()) GTEST_SKIP() << "no AVX2 + FMA + F16C on this CPU";
  auto avx2 = make_cpu_backend_at(1, SimdLevel::avx2);
  auto scalar = make_cpu_backend_at(1, SimdLevel::scalar);
  const Weight f16{DType::f16, nullptr, 8, 16}, q8{DType::q8_0, nullptr, 8, 32};
  EXPECT_EQ(avx2->matmul_layout(f16), WeightLayout::rows4x8);
  EXPECT_EQ(avx2->matmul_layout(q8), WeightLayout::rows);
  EXPECT_EQ(avx2->matmul_layout({DType::f16, nullptr, 6, 16}), WeightLayout::rows);
  EXPECT_EQ(scalar->matmul_layout(f16), WeightLayout::rows);
  set_qtile_mode(QTileMode::off);
  EXPECT_EQ(avx2->matmul_layout(f16), WeightLayout::rows);
  set_qtile_mode(QTileMode::best);
}

// Rows 100 = 25 groups: a short last tile of 4 rows for the 8-row AVX2 and
// 12-row AVX-512 tiles; K = 8 * 131, an odd number of steps.
TEST(WeightLayout, Rows4x8MatmulsHaveTheRowsLayoutsBits) {
  if (!has_avx2_backend()) GTEST_SKIP() << "no AVX2 + FMA + F16C on this CPU";
  const int64_t rows = 100, K = 8 * 131;
  const int max_n = 70;
  const std::vector<float> x = test::random_vec(size_t(max_n * K), 31, 2.0f);
  const std::vector<float> bias = test::random_vec(size_t(rows), 32);
  struct Paths {
    const char* name;
    QTileMode mode;
    bool matvec;
  };
  const Paths paths[] = {{"best", QTileMode::best, true},
                         {"avx2", QTileMode::avx2, true},
                         {"off", QTileMode::off, true},
                         {"best, no matvec", QTileMode::best, false}};
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    const test::OwnedWeight ow = test::make_weight(t, rows, K, 30);
    const Relaid r4 = relaid(ow.w);
    for (int threads = 1; threads <= 3; ++threads) {
      auto be = make_cpu_backend_at(threads, SimdLevel::avx2);
      for (int n : {1, 2, 3, 7, 8, 16, 17, 33, 64, 70}) {
        for (bool with_bias : {false, true}) {
          const float* b = with_bias ? bias.data() : nullptr;
          std::vector<float> want(size_t(n * rows), NAN);
          be->matmul(ow.w, b, x.data(), want.data(), n);
          for (const Paths& p : paths) {
            set_qtile_mode(p.mode);
            set_matvec_enabled(p.matvec);
            std::vector<float> got(size_t(n * rows), NAN);
            be->matmul(r4.w, b, x.data(), got.data(), n);
            set_qtile_mode(QTileMode::best);
            set_matvec_enabled(true);
            for (size_t i = 0; i < got.size(); ++i) {
              ASSERT_EQ(got[i], want[i]) << dtype_name(t) << " n " << n << " threads " << threads
                                         << " " << p.name << " bias " << with_bias << " token "
                                         << i / rows << " row " << i % rows;
            }
          }
        }
      }
    }
  }
}

// Decode's fused q/k/v-style loop over rows4x8 outputs (and one `rows`
// output of 5 rows before them, which puts the next one off a group
// boundary: then each output runs on its own) gives each output its own
// matmul's bits.
TEST(WeightLayout, FusedDecodeOfRows4x8EqualsOneMatmulEach) {
  if (!has_avx2_backend()) GTEST_SKIP() << "no AVX2 + FMA + F16C on this CPU";
  const int64_t K = 8 * 67;
  const std::vector<float> x = test::random_vec(size_t(K), 41, 2.0f);
  for (bool misaligned : {false, true}) {
    const std::vector<int64_t> rows =
        misaligned ? std::vector<int64_t>{5, 64, 36} : std::vector<int64_t>{68, 16, 36};
    std::vector<test::OwnedWeight> ws;
    std::vector<Relaid> r4s;
    std::vector<Weight> used;
    for (size_t i = 0; i < rows.size(); ++i) {
      ws.push_back(test::make_weight(DType::f16, rows[i], K, uint32_t(42 + i)));
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      if (fits_rows4x8(ws[i].w)) {
        r4s.push_back(relaid(ws[i].w));
        used.push_back(r4s.back().w);
      } else {
        used.push_back(ws[i].w);
      }
    }
    const std::vector<float> bias = test::random_vec(size_t(rows[1]), 49);
    for (int threads = 1; threads <= 3; ++threads) {
      auto be = make_cpu_backend_at(threads, SimdLevel::avx2);
      std::vector<std::vector<float>> one(rows.size()), fused(rows.size());
      std::vector<Backend::MatmulOut> outs;
      for (size_t i = 0; i < rows.size(); ++i) {
        one[i].assign(size_t(rows[i]), NAN);
        fused[i].assign(size_t(rows[i]), NAN);
        const float* b = i == 1 ? bias.data() : nullptr;
        be->matmul(ws[i].w, b, x.data(), one[i].data(), 1);
        outs.push_back({&used[i], b, fused[i].data()});
      }
      be->matmuls(outs, x.data(), 1);
      for (size_t i = 0; i < rows.size(); ++i) {
        for (int64_t r = 0; r < rows[i]; ++r) {
          ASSERT_EQ(fused[i][size_t(r)], one[i][size_t(r)])
              << "misaligned " << misaligned << " output " << i << " row " << r << " threads "
              << threads;
        }
      }
    }
  }
}

}  // namespace
}  // namespace rc::kernels
