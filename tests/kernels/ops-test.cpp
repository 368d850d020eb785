// Element-wise ops of the fast CPU backend against the reference (1e-5
// relative per element unless said otherwise), plus known answers for RoPE
// and its llama3 frequency scaling.
#include <gtest/gtest.h>

#include <cstring>
#include <numbers>

#include "cpu/cpu-backend.h"
#include "cpu/cpu-backends.h"
#include "cpu/host-memory.h"
#include "cpu/rope-freqs.h"
#include "kernel-test-util.h"

namespace rc::kernels {
namespace {

class Ops : public ::testing::TestWithParam<SimdLevel> {
 protected:
  std::unique_ptr<Backend> ref_ = make_reference_backend();
  std::unique_ptr<Backend> fast_ = make_cpu_backend_at(3, GetParam());
};

std::vector<float> abs_of(const std::vector<float>& v) {
  std::vector<float> a(v.size());
  for (size_t i = 0; i < v.size(); ++i) a[i] = std::fabs(v[i]);
  return a;
}

TEST_P(Ops, RmsNorm) {
  for (int dim : {7, 4099}) {
    for (int n : {1, 5, 40}) {
      const auto x = test::random_vec(size_t(n * dim), uint32_t(dim + n), 3.0f);
      const auto w = test::random_vec(size_t(dim), 2);
      std::vector<float> got(x.size()), want(x.size());
      fast_->rmsnorm(x.data(), w.data(), got.data(), n, dim, 1e-5f);
      ref_->rmsnorm(x.data(), w.data(), want.data(), n, dim, 1e-5f);
      test::expect_close(got.data(), want.data(), abs_of(want).data(), got.size(), 1e-5,
                         "rmsnorm dim " + std::to_string(dim));
      std::vector<float> inplace = x;  // y may alias x
      fast_->rmsnorm(inplace.data(), w.data(), inplace.data(), n, dim, 1e-5f);
      EXPECT_EQ(inplace, got);
    }
  }
}

TEST_P(Ops, RopeBothConventionsAndLlama3) {
  const int n_heads = 3, head_dim = 64;
  // Consecutive calls that differ only in one position, or only in the
  // config: the backend keeps the angles of its last call's positions.
  const std::vector<std::vector<int32_t>> positions{{0, 1, 17, 5000, 100000, 3},
                                                    {0, 1, 17, 5001, 100000, 3}};
  const int n = int(positions[0].size());
  for (bool neox : {false, true}) {
    for (int n_rot : {64, 32}) {
      for (float factor : {0.0f, 8.0f}) {
        for (const std::vector<int32_t>& pos : positions) {
          RopeConfig cfg;
          cfg.n_rot = n_rot;
          cfg.freq_base = factor != 0.0f ? 500000.0f : 10000.0f;
          cfg.neox_halves = neox;
          cfg.llama3_factor = factor;
          const auto x = test::random_vec(size_t(n * n_heads * head_dim), 4);
          std::vector<float> got = x, want = x;
          fast_->rope(got.data(), pos.data(), n, n_heads, head_dim, cfg);
          ref_->rope(want.data(), pos.data(), n, n_heads, head_dim, cfg);
          // Rotations preserve the norm: scale each element by its head's max.
          std::vector<float> scale(x.size());
          for (size_t h = 0; h < x.size() / head_dim; ++h) {
            float m = 0.0f;
            for (int c = 0; c < head_dim; ++c) m = std::max(m, std::fabs(x[h * head_dim + c]));
            for (int c = 0; c < head_dim; ++c) scale[h * head_dim + c] = m;
          }
          test::expect_close(got.data(), want.data(), scale.data(), got.size(), 1e-5, "rope");
          // Position 0 is the identity; dims past n_rot are never touched.
          for (int c = 0; c < n_heads * head_dim; ++c) EXPECT_EQ(got[size_t(c)], x[size_t(c)]);
          for (size_t h = 0; h < x.size() / head_dim; ++h) {
            for (int c = n_rot; c < head_dim; ++c) {
              EXPECT_EQ(got[h * head_dim + c], x[h * head_dim + c]);
            }
          }
        }
      }
    }
  }
}

TEST_P(Ops, SwigluAndAdd) {
  const int64_t count = 100003;
  auto g = test::random_vec(size_t(count), 8, 4.0f);
  g[5] = 30.0f;  // saturated ends of the sigmoid
  g[6] = -30.0f;
  g[7] = 0.0f;
  const auto u = test::random_vec(size_t(count), 9);
  std::vector<float> got(static_cast<size_t>(count)), want(static_cast<size_t>(count));
  fast_->swiglu(g.data(), u.data(), got.data(), count);
  ref_->swiglu(g.data(), u.data(), want.data(), count);
  test::expect_close(got.data(), want.data(), abs_of(want).data(), got.size(), 1e-5, "swiglu");
  std::vector<float> alias = g;  // out may alias gate
  fast_->swiglu(alias.data(), u.data(), alias.data(), count);
  EXPECT_EQ(alias, got);

  std::vector<float> y1 = g, y2 = g;
  fast_->add(y1.data(), u.data(), count);
  ref_->add(y2.data(), u.data(), count);
  EXPECT_EQ(y1, y2);
}

TEST_P(Ops, ArgmaxFirstOnTies) {
  std::vector<float> x{-3.0f, 2.0f, 7.0f, 7.0f, -1.0f};
  EXPECT_EQ(fast_->argmax(x.data(), int(x.size())), 2);
  EXPECT_EQ(ref_->argmax(x.data(), int(x.size())), 2);
  EXPECT_EQ(fast_->argmax(x.data(), 1), 0);
  const auto big = test::random_vec(32000, 12);
  EXPECT_EQ(fast_->argmax(big.data(), 32000), ref_->argmax(big.data(), 32000));
}

TEST_P(Ops, MemoryRoundTrip) {
  void* p = fast_->alloc(1000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::vector<uint8_t> src(1000), dst(1000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7);
  fast_->upload(p, src.data(), src.size());
  fast_->download(dst.data(), p, dst.size());
  EXPECT_EQ(src, dst);
  fast_->free(p);
}

INSTANTIATE_TEST_SUITE_P(Levels, Ops, ::testing::ValuesIn(test::runnable_levels()),
                         [](const auto& info) { return std::string(simd_level_name(info.param)); });

// host_alloc: small buffers on 64-byte boundaries, large ones on 2 MiB
// boundaries (where huge pages can back them), all of their bytes usable;
// the memory figures the CPU backend reads are plausible.
TEST(HostMemory, AlignmentBySizeAndEveryByteUsable) {
  for (size_t bytes : {size_t(0), size_t(1), size_t(100), kHugePageBytes - 1, kHugePageBytes,
                       kHugePageBytes * 3 + 12345}) {
    auto* p = static_cast<uint8_t*>(host_alloc(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    const size_t align = bytes >= kHugePageBytes ? kHugePageBytes : kHostAlign;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << bytes;
    std::memset(p, 0xA5, bytes);
    if (bytes > 0) {
      EXPECT_EQ(p[bytes - 1], 0xA5);
    }
    host_free(p);
  }
  const int64_t available = host_available_bytes();
  EXPECT_GT(available, int64_t(1) << 20);
}

TEST(Rope, RotatesAdjacentPairsOrHalves) {
  auto ref = make_reference_backend();
  RopeConfig cfg;
  cfg.n_rot = 4;
  cfg.freq_base = 100.0f;
  const int32_t pos = 3;
  // Pair j rotates by pos * base^(-2j / n_rot): j = 0 by 3 rad, j = 1 by 0.3 rad.
  std::vector<float> x{1.0f, 0.0f, 1.0f, 0.0f};
  ref->rope(x.data(), &pos, 1, 1, 4, cfg);
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(x[1], std::sin(3.0), 1e-6);
  EXPECT_NEAR(x[2], std::cos(0.3), 1e-6);
  EXPECT_NEAR(x[3], std::sin(0.3), 1e-6);
  cfg.neox_halves = true;  // pairs are (0, 2) and (1, 3)
  std::vector<float> y{1.0f, 1.0f, 0.0f, 0.0f};
  ref->rope(y.data(), &pos, 1, 1, 4, cfg);
  EXPECT_NEAR(y[0], std::cos(3.0), 1e-6);
  EXPECT_NEAR(y[2], std::sin(3.0), 1e-6);
  EXPECT_NEAR(y[1], std::cos(0.3), 1e-6);
  EXPECT_NEAR(y[3], std::sin(0.3), 1e-6);
}

TEST(Rope, Llama3FrequencyScaling) {
  // Llama 3.1's published settings: theta 500000, factor 8, low 1, high 4,
  // original context 8192. Wavelengths < 2048 keep their frequency, those
  // > 8192 are divided by 8, and in between
  //   f' = (1 - s) f / 8 + s f,  s = (8192 / wavelen - 1) / (4 - 1).
  RopeConfig cfg;
  cfg.n_rot = 128;
  cfg.freq_base = 500000.0f;
  cfg.llama3_factor = 8.0f;
  const std::vector<double> f = rope_freqs(cfg);
  ASSERT_EQ(f.size(), 64u);
  int kept = 0, divided = 0, blended = 0;
  for (int j = 0; j < 64; ++j) {
    const double base = std::pow(500000.0, -2.0 * j / 128);
    const double wavelen = 2 * std::numbers::pi / base;
    if (wavelen < 2048) {
      EXPECT_DOUBLE_EQ(f[size_t(j)], base);
      ++kept;
    } else if (wavelen > 8192) {
      EXPECT_DOUBLE_EQ(f[size_t(j)], base / 8);
      ++divided;
    } else {
      const double s = (8192 / wavelen - 1) / 3;
      EXPECT_NEAR(f[size_t(j)], (1 - s) * base / 8 + s * base, 1e-15);
      EXPECT_LT(f[size_t(j)], base);
      EXPECT_GT(f[size_t(j)], base / 8);
      ++blended;
    }
  }
  // All three bands occur for these settings.
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(blended, 0);
  // j = 0 (wavelength 2 pi) is untouched; the last pair is divided by 8.
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_DOUBLE_EQ(f[63], std::pow(500000.0, -126.0 / 128) / 8);
}

}  // namespace
}  // namespace rc::kernels
