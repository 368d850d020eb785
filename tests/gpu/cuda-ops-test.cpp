// Every CUDA op against the CPU reference backend (the oracle), with the
// tolerances cuda-backend.h states: exact for gathers and copies, 1e-5
// relative for fp32 math, 1e-2 relative (of sum |w x|) for matmuls that
// round activations to 16 bits for the tensor cores. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "gpu-test-util.h"

namespace rc::kernels {

// Readable parameters in test listings (found by ADL, so outside the
// anonymous namespace).
static void PrintTo(DType t, std::ostream* os) { *os << dtype_name(t); }

namespace {

using test::DevBuf;
using test::expect_close;
using test::expect_no_error;
using test::from_device;
using test::to_device;

std::vector<float> dequantized(const Weight& w) {
  std::vector<float> d(size_t(w.rows * w.cols));
  const int64_t rb = row_bytes(w.type, w.cols);
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, static_cast<const uint8_t*>(w.data) + r * rb, d.data() + r * w.cols,
                   w.cols);
  }
  return d;
}

// Whether the CUDA matmul keeps x in fp32 for n tokens of this type.
bool exact_path(DType t, int n) {
  if (t == DType::f32) return true;
  return n <= (block_elems(t) > 1 ? cuda::kGemvMaxTokensBlocks : cuda::kGemvMaxTokensFloat);
}

class CudaMatmul : public ::testing::TestWithParam<DType> {};

void check_matmul(Backend& gpu, Backend& ref, DType type, int64_t rows, int64_t K,
                  const std::vector<int>& ns, uint32_t seed) {
  const test::OwnedWeight ow = test::make_weight(type, rows, K, seed);
  const test::DevWeight dw = to_device(gpu, ow);
  const std::vector<float> wd = dequantized(ow.w);
  const std::vector<float> bias = test::random_vec(size_t(rows), seed + 1);
  const DevBuf dbias = to_device(gpu, bias);
  for (int n : ns) {
    const std::vector<float> x = test::random_vec(size_t(n * K), seed + 2 + uint32_t(n), 2.0f);
    const DevBuf dx = to_device(gpu, x);
    DevBuf dy(gpu, size_t(n * rows) * 4);
    ASSERT_TRUE(dw.buf.get() && dx.get() && dy.get());
    for (bool with_bias : {false, true}) {
      gpu.matmul(dw.w, with_bias ? dbias.as() : nullptr, dx.as(), dy.as(), n);
      const std::vector<float> got = from_device(gpu, dy.get(), size_t(n * rows));
      std::vector<float> want(got.size());
      ref.matmul(ow.w, with_bias ? bias.data() : nullptr, x.data(), want.data(), n);
      std::vector<float> scale(got.size());
      for (int t = 0; t < n; ++t) {
        for (int64_t r = 0; r < rows; ++r) {
          double s = with_bias ? std::fabs(bias[size_t(r)]) : 0.0;
          for (int64_t k = 0; k < K; ++k) {
            s += std::fabs(wd[size_t(r * K + k)]) * std::fabs(x[size_t(t * K + k)]);
          }
          scale[size_t(t * rows + r)] = float(s);
        }
      }
      const double rtol = exact_path(type, n) ? 1e-5 : 1e-2;
      expect_close(got.data(), want.data(), scale.data(), got.size(), rtol,
                   std::string(dtype_name(type)) + " rows " + std::to_string(rows) + " K " +
                       std::to_string(K) + " n " + std::to_string(n) + (with_bias ? " bias" : ""));
      expect_no_error(gpu, "matmul");
    }
  }
}

TEST_P(CudaMatmul, MatchesReferenceOnGemvAndGemmPaths) {
  RC_REQUIRE_CUDA(gpu);
  auto ref = make_reference_backend();
  const DType type = GetParam();
  const int64_t be = block_elems(type);
  const std::vector<int64_t> cols = be == 1    ? std::vector<int64_t>{67, 520}
                                    : be == 32 ? std::vector<int64_t>{96, 544}
                                               : std::vector<int64_t>{256, 768};
  // 1..8: float GEMV; 9..32: block GEMV in groups of 8, cuBLAS for floats; 33+: cuBLAS.
  const std::vector<int> ns{1, 3, 8, 9, 19, 32, 33, 64};
  uint32_t seed = 1;
  for (int64_t K : cols) {
    for (int64_t rows : {1, 37, 300}) {
      check_matmul(*gpu, *ref, type, rows, K, ns, seed);
      seed += 100;
    }
  }
}

TEST_P(CudaMatmul, GetRowsIsDequantizeRowBitForBit) {
  RC_REQUIRE_CUDA(gpu);
  const DType type = GetParam();
  const int64_t be = block_elems(type);
  for (int64_t K : be == 256  ? std::vector<int64_t>{512}
                   : be == 32 ? std::vector<int64_t>{96}
                              : std::vector<int64_t>{67, 520}) {
    const test::OwnedWeight ow = test::make_weight(type, 50, K, 3);
    const test::DevWeight dw = to_device(*gpu, ow);
    const std::vector<int32_t> ids{49, 0, 7, 7, 23, 50};  // 50: outside the table
    const DevBuf did = to_device(*gpu, ids);
    DevBuf dout(*gpu, ids.size() * size_t(K) * 4);
    gpu->get_rows(dw.w, did.as<int32_t>(), dout.as(), int(ids.size()));
    const std::vector<float> got = from_device(*gpu, dout.get(), ids.size() * size_t(K));
    expect_no_error(*gpu, "get_rows");
    const int64_t rb = row_bytes(type, K);
    std::vector<float> want(static_cast<size_t>(K));
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      dequantize_row(type, ow.bytes.data() + ids[i] * rb, want.data(), K);
      EXPECT_EQ(0, std::memcmp(got.data() + i * size_t(K), want.data(), size_t(K) * 4))
          << dtype_name(type) << " K " << K << " id " << ids[i];
    }
    for (int64_t k = 0; k < K; ++k) EXPECT_TRUE(std::isnan(got[5 * size_t(K) + size_t(k)]));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaMatmul, ::testing::ValuesIn(test::all_dtypes()),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// A block-type matrix over kDequantChunkElems elements: the prefill path
// dequantizes and multiplies it in two chunks.
TEST(CudaMatmulLarge, ChunkedDequantizeGemm) {
  RC_REQUIRE_CUDA(gpu);
  auto ref = make_reference_backend();
  check_matmul(*gpu, *ref, DType::q4_0, 8200, 4096, {40}, 77);
}

TEST(CudaOps, RmsNorm) {
  RC_REQUIRE_CUDA(gpu);
  auto ref = make_reference_backend();
  for (int dim : {7, 4099}) {
    for (int n : {1, 5, 40}) {
      const auto x = test::random_vec(size_t(n * dim), uint32_t(dim + n), 3.0f);
      const auto w = test::random_vec(size_t(dim), 2);
      DevBuf dx = to_device(*gpu, x), dw = to_device(*gpu, w);
      DevBuf dy(*gpu, x.size() * 4);
      gpu->rmsnorm(dx.as(), dw.as(), dy.as(), n, dim, 1e-5f);
      const auto got = from_device(*gpu, dy.get(), x.size());
      std::vector<float> want(x.size());
      ref->rmsnorm(x.data(), w.data(), want.data(), n, dim, 1e-5f);
      expect_close(got.data(), want.data(), test::abs_of(want).data(), got.size(), 1e-5,
                   "rmsnorm dim " + std::to_string(dim));
      gpu->rmsnorm(dx.as(), dw.as(), dx.as(), n, dim, 1e-5f);  // y may alias x
      EXPECT_EQ(from_device(*gpu, dx.get(), x.size()), got);
      expect_no_error(*gpu, "rmsnorm");
    }
  }
}

TEST(CudaOps, RopeBothConventionsAndLlama3) {
  RC_REQUIRE_CUDA(gpu);
  auto ref = make_reference_backend();
  const int n_heads = 3, head_dim = 64;
  const std::vector<int32_t> pos{0, 1, 17, 5000, 100000, 3};
  const int n = int(pos.size());
  for (bool neox : {false, true}) {
    for (int n_rot : {64, 32}) {
      for (float factor : {0.0f, 8.0f}) {
        RopeConfig cfg;
        cfg.n_rot = n_rot;
        cfg.freq_base = factor != 0.0f ? 500000.0f : 10000.0f;
        cfg.neox_halves = neox;
        cfg.llama3_factor = factor;
        const auto x = test::random_vec(size_t(n * n_heads * head_dim), 4);
        DevBuf dx = to_device(*gpu, x);
        gpu->rope(dx.as(), pos.data(), n, n_heads, head_dim, cfg);
        const auto got = from_device(*gpu, dx.get(), x.size());
        std::vector<float> want = x;
        ref->rope(want.data(), pos.data(), n, n_heads, head_dim, cfg);
        std::vector<float> scale(x.size());
        for (size_t h = 0; h < x.size() / head_dim; ++h) {
          float m = 0.0f;
          for (int c = 0; c < head_dim; ++c) m = std::max(m, std::fabs(x[h * head_dim + c]));
          for (int c = 0; c < head_dim; ++c) scale[h * head_dim + c] = m;
        }
        expect_close(got.data(), want.data(), scale.data(), got.size(), 1e-5, "rope");
        for (int c = 0; c < n_heads * head_dim; ++c) EXPECT_EQ(got[size_t(c)], x[size_t(c)]);
        for (size_t h = 0; h < x.size() / head_dim; ++h) {
          for (int c = n_rot; c < head_dim; ++c)
            EXPECT_EQ(got[h * head_dim + c], x[h * head_dim + c]);
        }
        expect_no_error(*gpu, "rope");
      }
    }
  }
}

TEST(CudaOps, SwigluAndAdd) {
  RC_REQUIRE_CUDA(gpu);
  auto ref = make_reference_backend();
  const int64_t count = 100003;
  auto g = test::random_vec(size_t(count), 8, 4.0f);
  g[5] = 30.0f;
  g[6] = -30.0f;
  g[7] = 0.0f;
  const auto u = test::random_vec(size_t(count), 9);
  DevBuf dg = to_device(*gpu, g), du = to_device(*gpu, u);
  DevBuf dout(*gpu, size_t(count) * 4);
  gpu->swiglu(dg.as(), du.as(), dout.as(), count);
  const auto got = from_device(*gpu, dout.get(), size_t(count));
  std::vector<float> want(static_cast<size_t>(count));
  ref->swiglu(g.data(), u.data(), want.data(), count);
  expect_close(got.data(), want.data(), test::abs_of(want).data(), got.size(), 1e-5, "swiglu");
  gpu->swiglu(dg.as(), du.as(), dg.as(), count);  // out may alias gate
  EXPECT_EQ(from_device(*gpu, dg.get(), size_t(count)), got);

  DevBuf dy = to_device(*gpu, g);
  gpu->add(dy.as(), du.as(), count);
  std::vector<float> y = g;
  ref->add(y.data(), u.data(), count);
  EXPECT_EQ(from_device(*gpu, dy.get(), size_t(count)), y);
  expect_no_error(*gpu, "swiglu/add");
}

TEST(CudaOps, ArgmaxFirstOnTiesAndPerRow) {
  RC_REQUIRE_CUDA(gpu);
  auto ref = make_reference_backend();
  const std::vector<float> x{-3.0f, 2.0f, 7.0f, 7.0f, -1.0f};
  DevBuf dx = to_device(*gpu, x);
  EXPECT_EQ(gpu->argmax(dx.as(), int(x.size())), 2);
  EXPECT_EQ(gpu->argmax(dx.as(), 1), 0);
  const std::vector<float> inf(7, -INFINITY);
  DevBuf dinf = to_device(*gpu, inf);
  EXPECT_EQ(gpu->argmax(dinf.as(), 7), 0);
  const int rows = 5, n = 32000;
  auto big = test::random_vec(size_t(rows * n), 12);
  big[size_t(3 * n + 100)] = 50.0f;  // a tie late in row 3 loses to the first
  big[size_t(3 * n + 31999)] = 50.0f;
  DevBuf dbig = to_device(*gpu, big);
  std::vector<int32_t> ids(rows, -1);
  gpu->argmax_rows(dbig.as(), rows, n, ids.data());
  for (int r = 0; r < rows; ++r) EXPECT_EQ(ids[size_t(r)], ref->argmax(big.data() + r * n, n)) << r;
  EXPECT_EQ(ids[3], 100);
  expect_no_error(*gpu, "argmax");
}

TEST(CudaOps, SoftmaxRows) {
  RC_REQUIRE_CUDA(gpu);
  const int rows = 3, n = 1000;
  const float t = 0.7f;
  const auto x = test::random_vec(size_t(rows * n), 21, 3.0f);
  DevBuf dx = to_device(*gpu, x);
  ASSERT_TRUE(cuda::softmax_rows(*gpu, dx.as(), rows, n, t));
  const auto got = from_device(*gpu, dx.get(), x.size());
  for (int r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * n;
    const double m = *std::max_element(xr, xr + n);
    double z = 0.0;
    for (int i = 0; i < n; ++i) z += std::exp((xr[i] - m) / t);
    for (int i = 0; i < n; ++i) {
      const double want = std::exp((xr[i] - m) / t) / z;
      EXPECT_NEAR(got[size_t(r * n + i)], want, 1e-5 * want + 1e-9) << r << " " << i;
    }
  }
  expect_no_error(*gpu, "softmax");
}

// The host model of sample_rows: kept set, then the id whose interval of the
// running sum (in id order) holds u * total.
struct HostDraw {
  std::vector<int> kept;
  std::vector<double> lo, hi;  // interval of each kept id, normalised
};

HostDraw host_draw(const float* x, int n, const cuda::DeviceSampling& p) {
  const double m = *std::max_element(x, x + n);
  std::vector<float> sorted(x, x + n);
  std::sort(sorted.begin(), sorted.end(), std::greater<float>());
  float tau = -INFINITY;
  if (p.top_k > 0 && p.top_k < n) tau = sorted[size_t(p.top_k - 1)];
  auto prob = [&](float v) { return std::exp((double(v) - m) / p.temperature); };
  if (p.top_p < 1.0f) {
    double z = 0.0;
    for (int i = 0; i < n; ++i) z += x[i] >= tau ? prob(x[i]) : 0.0;
    double cum = 0.0;
    for (float v : sorted) {  // distinct values (random logits)
      if (v < tau) break;
      cum += prob(v);
      if (cum >= p.top_p * z) {
        tau = v;
        break;
      }
    }
  }
  HostDraw d;
  double total = 0.0;
  for (int i = 0; i < n; ++i) {
    if (x[i] >= tau) total += prob(x[i]);
  }
  double run = 0.0;
  for (int i = 0; i < n; ++i) {
    if (x[i] < tau) continue;
    d.kept.push_back(i);
    d.lo.push_back(run / total);
    run += prob(x[i]);
    d.hi.push_back(run / total);
  }
  return d;
}

TEST(CudaOps, SampleRowsTemperatureTopKTopP) {
  RC_REQUIRE_CUDA(gpu);
  const int n = 50;
  const std::vector<cuda::DeviceSampling> settings{
      {1.0f, 0, 1.0f}, {0.7f, 5, 1.0f}, {1.3f, 0, 0.5f}, {0.9f, 10, 0.9f}, {1.0f, 1, 1.0f}};
  const auto x = test::random_vec(size_t(n), 33, 2.0f);
  DevBuf dx = to_device(*gpu, x);
  for (const cuda::DeviceSampling& p : settings) {
    const HostDraw d = host_draw(x.data(), n, p);
    for (size_t j = 0; j < d.kept.size(); ++j) {
      const float u = float((d.lo[j] + d.hi[j]) / 2);
      int32_t id = -1;
      ASSERT_TRUE(cuda::sample_rows(*gpu, dx.as(), 1, n, &p, &u, &id));
      EXPECT_EQ(id, d.kept[j]) << "T " << p.temperature << " k " << p.top_k << " p " << p.top_p;
    }
  }
  // Temperature 0 is argmax, whatever u.
  const cuda::DeviceSampling greedy{0.0f, 0, 1.0f};
  const float u = 0.99f;
  int32_t id = -1;
  ASSERT_TRUE(cuda::sample_rows(*gpu, dx.as(), 1, n, &greedy, &u, &id));
  EXPECT_EQ(id, int32_t(std::max_element(x.begin(), x.end()) - x.begin()));
  expect_no_error(*gpu, "sample");
}

TEST(CudaOps, MemoryRoundTripAndOutOfMemory) {
  RC_REQUIRE_CUDA(gpu);
  std::vector<uint8_t> src(1000), dst(1000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7);
  DevBuf d = to_device(*gpu, src);
  gpu->download(dst.data(), d.get(), dst.size());
  EXPECT_EQ(src, dst);
  EXPECT_FALSE(gpu->host_memory());
  EXPECT_GT(gpu->free_memory(), 0);
  // Out of memory is an answer, not an error, and leaves the backend usable.
  EXPECT_EQ(gpu->alloc(size_t(1) << 52), nullptr);
  EXPECT_EQ(gpu->make_kv_pool({1000, 64, 128, 16, int64_t(1) << 30}), nullptr);
  EXPECT_EQ(gpu->take_error(), "");
  DevBuf again = to_device(*gpu, src);
  gpu->download(dst.data(), again.get(), dst.size());
  EXPECT_EQ(src, dst);
  expect_no_error(*gpu, "memory");
}

}  // namespace
}  // namespace rc::kernels
