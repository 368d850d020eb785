// Storage types: the dtype tables, fp16/bf16 conversion, known-answer blocks
// that pin each GGUF block layout bit by bit, and quantize/dequantize round
// trips with per-type error bounds derived from each format's step size.
#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>

#include "cpu/act-quant.h"
#include "cpu/elementwise.h"
#include "cpu/fp16.h"
#include "cpu/quant-blocks.h"
#include "kernel-test-util.h"

namespace rc::kernels {
namespace {

using test::random_vec;

TEST(DType, TablesMatchGgml) {
  EXPECT_EQ(block_bytes(DType::q4_0), 18);
  EXPECT_EQ(block_bytes(DType::q8_0), 34);
  EXPECT_EQ(block_bytes(DType::q4_k), 144);
  EXPECT_EQ(block_bytes(DType::q6_k), 210);
  EXPECT_EQ(block_bytes(DType::q5_0), 22);
  EXPECT_EQ(block_bytes(DType::q5_1), 24);
  EXPECT_EQ(block_bytes(DType::q5_k), 176);
  EXPECT_EQ(block_elems(DType::q5_1), 32);
  EXPECT_EQ(block_elems(DType::q5_k), 256);
  EXPECT_EQ(dtype_from_gguf(6), DType::q5_0);
  EXPECT_EQ(dtype_from_gguf(7), DType::q5_1);
  EXPECT_EQ(dtype_from_gguf(13), DType::q5_k);
  EXPECT_EQ(block_elems(DType::q4_k), 256);
  EXPECT_EQ(row_bytes(DType::f16, 10), 20);
  EXPECT_EQ(row_bytes(DType::q6_k, 512), 420);
  EXPECT_EQ(dtype_from_gguf(12), DType::q4_k);
  EXPECT_EQ(dtype_from_gguf(30), DType::bf16);
  EXPECT_EQ(dtype_from_gguf(3), std::nullopt);  // Q4_1: unsupported
  EXPECT_STREQ(dtype_name(DType::q6_k), "Q6_K");
  for (DType t : test::all_dtypes()) EXPECT_EQ(dtype_from_gguf(uint32_t(t)), t);
}

TEST(Fp16, PortableMatchesNativeOnAllInputs) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float a = fp16_to_f32_portable(uint16_t(h)), b = fp16_to_f32(uint16_t(h));
    if (std::isnan(a)) {
      EXPECT_TRUE(std::isnan(b)) << h;
      continue;
    }
    ASSERT_EQ(f32_to_bits(a), f32_to_bits(b)) << h;
    ASSERT_EQ(f32_to_fp16_portable(a), h) << "round trip of " << h;
  }
  // Rounding to nearest even between representable values, and overflow.
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const float f = bits_to_f32(rng() & 0xc7ffffffu);  // |f| < 2^17 or tiny
    ASSERT_EQ(f32_to_fp16_portable(f), f32_to_fp16(f)) << f;
  }
  EXPECT_EQ(f32_to_fp16_portable(65520.0f), 0x7c00);
  EXPECT_EQ(f32_to_fp16_portable(65519.0f), 0x7bff);
  EXPECT_EQ(f32_to_fp16_portable(1.0f + 1.0f / 2048), 0x3c00);  // tie -> even
  EXPECT_EQ(f32_to_fp16_portable(1.0f + 3.0f / 2048), 0x3c02);  // tie -> even (up)
}

// The KV store's row conversion (F16C where the CPU has it) writes
// f32_to_fp16's bits: every fp16 value, the ties and their neighbours
// around each, overflow, subnormals, infinities and NaN, at lengths that
// leave tails past the 8-wide steps.
TEST(Fp16, RowConversionMatchesScalarBits) {
  std::vector<float> x;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_f32_portable(uint16_t(h));
    if (std::isnan(f)) continue;
    const uint32_t b = f32_to_bits(f);
    for (int32_t d : {-1, 0, 1}) x.push_back(bits_to_f32(b + uint32_t(d)));
    x.push_back(bits_to_f32((b & 0xffffe000u) | 0x1000u));  // halfway to the next fp16
  }
  for (float f : {65504.0f, 65519.0f, 65520.0f, 1e30f, -1e30f, INFINITY, -INFINITY, 1e-30f, -0.0f,
                  5.9604644775390625e-8f, 2.98e-8f})
    x.push_back(f);
  x.push_back(NAN);
  for (SimdLevel level : {SimdLevel::scalar, best_simd_level()}) {
    for (size_t n : {x.size(), x.size() - 3, size_t(5)}) {
      std::vector<uint16_t> got(n);
      f16_row_fn(level)(x.data(), got.data(), int64_t(n));
      for (size_t i = 0; i < n; ++i) {
        if (std::isnan(x[i])) {
          EXPECT_EQ(got[i] & 0x7c00, 0x7c00);
          EXPECT_NE(got[i] & 0x3ff, 0);
          continue;
        }
        ASSERT_EQ(got[i], f32_to_fp16(x[i])) << x[i] << " " << simd_level_name(level);
      }
    }
  }
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f808000u)), 0x3f80);  // tie -> even
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f818000u)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f808001u)), 0x3f81);
  EXPECT_EQ(bf16_to_f32(0xc000), -2.0f);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

TEST(KnownAnswer, Q4_0) {
  BlockQ4_0 b{};
  b.d = 0x3800;  // 0.5
  for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | ((15 - j) << 4));
  float y[32];
  dequantize_row(DType::q4_0, &b, y, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * float(j - 8)) << j;            // low nibbles: elements 0..15
    EXPECT_EQ(y[j + 16], 0.5f * float(15 - j - 8)) << j;  // high nibbles: 16..31
  }
}

TEST(KnownAnswer, Q8_0) {
  BlockQ8_0 b{};
  b.d = 0x3400;  // 0.25
  for (int j = 0; j < 32; ++j) b.qs[j] = int8_t(j * 8 - 128);
  float y[32];
  dequantize_row(DType::q8_0, &b, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], 0.25f * float(j * 8 - 128)) << j;
}

// Sub-block scales and mins chosen to exercise all six bits, packed by
// hand from the layout: bytes 0-3 = sc[0..3] | (sc[4..7] >> 4) << 6,
// bytes 4-7 = m[0..3] | (m[4..7] >> 4) << 6, bytes 8-11 = sc[4..7] & 15 |
// (m[4..7] & 15) << 4. Q5_K adds bit j of qh[l] as 16 to element l of
// sub-block j.
template <class Block>
void check_k_affine_block(DType t) {
  constexpr bool k5 = std::is_same_v<Block, BlockQ5_K>;
  const int sc[8] = {1, 2, 3, 4, 33, 45, 60, 63};
  const int m[8] = {0, 5, 10, 15, 20, 50, 62, 63};
  const uint8_t scales[12] = {0x81, 0x82, 0xc3, 0xc4, 0x40, 0xc5,
                              0xca, 0xcf, 0x41, 0x2d, 0xec, 0xff};
  Block b{};
  b.d = 0x3c00;     // 1.0
  b.dmin = 0x3800;  // 0.5
  std::memcpy(b.scales, scales, 12);
  for (int i = 0; i < 128; ++i) b.qs[i] = uint8_t((i % 16) | ((15 - i % 13) << 4));
  uint8_t qh[32] = {};
  if constexpr (k5) {
    for (int l = 0; l < 32; ++l) b.qh[l] = qh[l] = uint8_t(l * 37 + 11);
  }
  float y[256];
  dequantize_row(t, &b, y, 256);
  for (int e = 0; e < 256; ++e) {
    const int j = e / 32, l = e % 32;
    const int byte = 32 * (j / 2) + l;  // sub-blocks 2i, 2i+1 share 32 bytes
    const int q = (j % 2 == 0 ? byte % 16 : 15 - byte % 13) + 16 * ((qh[l] >> j) & 1);
    EXPECT_EQ(y[e], 1.0f * float(sc[j]) * float(q) - 0.5f * float(m[j])) << e;
  }
}

TEST(KnownAnswer, Q4_K) { check_k_affine_block<BlockQ4_K>(DType::q4_k); }
TEST(KnownAnswer, Q5_K) { check_k_affine_block<BlockQ5_K>(DType::q5_k); }

TEST(KnownAnswer, Q6_K) {
  BlockQ6_K b{};
  b.d = 0x3000;  // 0.125
  for (int j = 0; j < 16; ++j) b.scales[j] = int8_t((j % 2 ? -1 : 1) * (8 * j + 1));
  b.ql[5] = 0x9a;
  b.qh[5] = 0xe4;  // 2-bit fields 00, 01, 10, 11 from the low bits
  b.ql[37] = 0x3c;
  float y[256];
  dequantize_row(DType::q6_k, &b, y, 256);
  auto want = [&](int e, int q) { return 0.125f * float(b.scales[e / 16]) * float(q - 32); };
  // Element 5: low nibble of ql[5] (10) + bits 0-1 of qh[5] (0).
  EXPECT_EQ(y[5], want(5, 10));
  // Element 37: low nibble of ql[37] (12) + bits 2-3 of qh[5] (1) << 4.
  EXPECT_EQ(y[37], want(37, 12 + 16));
  // Element 69: high nibble of ql[5] (9) + bits 4-5 (2) << 4.
  EXPECT_EQ(y[69], want(69, 9 + 32));
  // Element 101: high nibble of ql[37] (3) + bits 6-7 (3) << 4.
  EXPECT_EQ(y[101], want(101, 3 + 48));
  for (int e = 0; e < 256; ++e) {
    if (e == 5 || e == 37 || e == 69 || e == 101) continue;
    EXPECT_EQ(y[e], want(e, 0)) << e;
  }
}

TEST(KnownAnswer, Q5_0AndQ5_1) {
  // qh is a little-endian uint32: bit j is the 5th bit of element j.
  BlockQ5_0 b{};
  b.d = 0x3800;  // 0.5
  for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | ((15 - j) << 4));
  const uint32_t h = 0x8001a5c3u;
  std::memcpy(b.qh, &h, 4);
  auto q_of = [&](int e) {
    const int lo = e < 16 ? e : 15 - (e - 16);
    return lo | int(((h >> e) & 1) << 4);
  };
  float y[32];
  dequantize_row(DType::q5_0, &b, y, 32);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(y[e], 0.5f * float(q_of(e) - 16)) << e;
  EXPECT_EQ(y[0], 0.5f * float(16 - 16));   // bit 0 set, nibble 0
  EXPECT_EQ(y[31], 0.5f * float(16 - 16));  // bit 31 set, high nibble of qs[15] = 0

  BlockQ5_1 c{};
  c.d = 0x3400;  // 0.25
  c.m = 0xbc00;  // -1.0
  std::memcpy(c.qh, &h, 4);
  std::memcpy(c.qs, b.qs, 16);
  dequantize_row(DType::q5_1, &c, y, 32);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(y[e], 0.25f * float(q_of(e)) - 1.0f) << e;
}

// Round trips: every element within the bound its block's step allows.
class RoundTrip : public ::testing::TestWithParam<DType> {};

TEST_P(RoundTrip, WithinBound) {
  const DType t = GetParam();
  const int64_t n = 4096;
  std::vector<float> x = random_vec(size_t(n), 11, 1.0f);
  x[100] = 0.0f;
  for (int j = 256; j < 512; ++j) x[size_t(j)] = 0.0f;  // an all-zero super-block
  std::vector<uint8_t> q(size_t(row_bytes(t, n)));
  quantize_row(t, x.data(), q.data(), n);
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(t, q.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[size_t(i)], err = std::fabs(y[size_t(i)] - xi);
    double bound = 0.0;
    switch (t) {
      case DType::f32:
        bound = 0.0;
        break;
      case DType::f16:
        bound = std::fabs(xi) * 0x1p-11 + 0x1p-25;  // half an ulp (subnormals: 2^-25)
        break;
      case DType::bf16:
        bound = std::fabs(xi) * 0x1p-8;
        break;
      case DType::q8_0: {
        // Half a step; the fp16 rounding of d can push the largest element
        // 0.06 steps past 127, where it is clamped.
        const auto& b = static_cast<const BlockQ8_0*>(static_cast<const void*>(q.data()))[i / 32];
        bound = 0.57 * fp16_to_f32(b.d);
        break;
      }
      case DType::q4_0: {
        // The largest magnitude maps to -8 exactly; the other sign stops at
        // +7, so elements beyond 7.5 steps may lose up to one step.
        const auto& b = static_cast<const BlockQ4_0*>(static_cast<const void*>(q.data()))[i / 32];
        bound = 1.0 * std::fabs(fp16_to_f32(b.d)) + 1e-6;
        break;
      }
      case DType::q5_0: {
        // As Q4_0 with 16 levels each side.
        const auto& b = static_cast<const BlockQ5_0*>(static_cast<const void*>(q.data()))[i / 32];
        bound = 1.0 * std::fabs(fp16_to_f32(b.d)) + 1e-6;
        break;
      }
      case DType::q5_1: {
        // Half a step, plus the fp16 rounding of the min and of d (which
        // can push the top element past level 31, where it is clamped).
        const auto& b = static_cast<const BlockQ5_1*>(static_cast<const void*>(q.data()))[i / 32];
        const float d = fp16_to_f32(b.d), m = fp16_to_f32(b.m);
        bound = 0.5 * d + 0x1p-10 * std::fabs(m) + 31.0 * d * 0x1p-10 + 1e-6;
        break;
      }
      case DType::q5_k: {
        // As Q4_K with 31 levels: half a step, plus the clamping the 6-bit
        // rounding of scale (<= d/2 per level) and min (<= dmin/2) causes.
        const auto& b = static_cast<const BlockQ5_K*>(static_cast<const void*>(q.data()))[i / 256];
        uint8_t sc, m;
        q4k_scale_min(int(i % 256 / 32), b.scales, &sc, &m);
        const float d = fp16_to_f32(b.d), dmin = fp16_to_f32(b.dmin);
        bound = 0.5 * d * sc + 15.5 * d + 0.5 * dmin + 1e-6;
        break;
      }
      case DType::q4_k: {
        // Half a step, plus the clamping at the top of the range that the
        // 6-bit rounding of scale (<= d/2 per level, 15 levels) and min
        // (<= dmin/2) can cause.
        const auto& b = static_cast<const BlockQ4_K*>(static_cast<const void*>(q.data()))[i / 256];
        uint8_t sc, m;
        q4k_scale_min(int(i % 256 / 32), b.scales, &sc, &m);
        const float d = fp16_to_f32(b.d), dmin = fp16_to_f32(b.dmin);
        bound = 0.5 * d * sc + 7.5 * d + 0.5 * dmin + 1e-6;
        break;
      }
      case DType::q6_k: {
        // Half a step, one step where the opposite sign clamps at +31, and
        // the 8-bit rounding of the sub-block scale over 32 levels.
        const auto& b = static_cast<const BlockQ6_K*>(static_cast<const void*>(q.data()))[i / 256];
        const float d = fp16_to_f32(b.d);
        bound = 1.5 * std::fabs(d * b.scales[i % 256 / 16]) + 16.0 * std::fabs(d) + 1e-6;
        break;
      }
    }
    ASSERT_LE(err, bound) << dtype_name(t) << " element " << i << " x " << xi << " y "
                          << y[size_t(i)];
  }
  // And the overall error is what each format is known for (relative RMS).
  double se = 0.0, sx = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    se += std::pow(double(y[size_t(i)]) - x[size_t(i)], 2);
    sx += std::pow(double(x[size_t(i)]), 2);
  }
  const double rel_rms = std::sqrt(se / sx);
  const double max_rel_rms = t == DType::q4_0 || t == DType::q4_k                       ? 0.12
                             : t == DType::q5_0 || t == DType::q5_1 || t == DType::q5_k ? 0.06
                             : t == DType::q6_k                                         ? 0.04
                             : t == DType::q8_0                                         ? 0.01
                                                                                        : 0.005;
  EXPECT_LE(rel_rms, max_rel_rms) << dtype_name(t);
  // Quantizing the decoded values again is (nearly) a fixed point of the
  // block layout: the same bytes for the float types and Q8_0.
  if (t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::q8_0) {
    std::vector<uint8_t> q2(q.size());
    quantize_row(t, y.data(), q2.data(), n);
    EXPECT_EQ(q, q2);
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, RoundTrip, ::testing::ValuesIn(test::all_dtypes()),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(ActQuant, HalfStepBoundAndSums) {
  const int64_t n = 1024;
  std::vector<float> x = random_vec(size_t(n), 5, 3.0f);
  for (int j = 64; j < 96; ++j) x[size_t(j)] = 0.0f;
  for (ActFormat f : {ActFormat::q8_32, ActFormat::q8_256}) {
    const int block = f == ActFormat::q8_32 ? 32 : 256;
    std::vector<uint8_t> q(static_cast<size_t>(act_row_bytes(f, n)));
    quantize_act(f, x.data(), q.data(), n);
    std::vector<float> y(x.size());
    dequantize_act(f, q.data(), y.data(), n);
    for (int64_t b = 0; b < n / block; ++b) {
      float amax = 0.0f;
      for (int j = 0; j < block; ++j) amax = std::max(amax, std::fabs(x[size_t(b * block + j)]));
      for (int j = 0; j < block; ++j) {
        const int64_t i = b * block + j;
        ASSERT_LE(std::fabs(y[size_t(i)] - x[size_t(i)]), 0.5f * amax / 127.0f * 1.0001f);
      }
    }
    if (f == ActFormat::q8_32) {
      const auto* a = reinterpret_cast<const BlockQ8A*>(q.data());
      EXPECT_EQ(y[70], 0.0f);
      int s = 0;
      for (int j = 0; j < 16; ++j) s += a[3].qs[j];
      EXPECT_EQ(a[3].sum[0], s);
    } else {
      const auto* a = reinterpret_cast<const BlockQ8K*>(q.data());
      int s = 0;
      for (int j = 32; j < 64; ++j) s += a[1].qs[j];
      EXPECT_EQ(a[1].bsum[1], s);
    }
  }
}

TEST(ActQuant, EveryLevelWritesTheSameBytes) {
  const int64_t n = 2048;
  std::vector<float> x = random_vec(size_t(n), 6, 2.0f);
  for (int j = 0; j < 256; ++j) x[size_t(j)] = 0.0f;                   // zero blocks
  for (int j = 256; j < 288; ++j) x[size_t(j)] = float(j % 5) - 2.0f;  // ties at .5 steps
  x[300] = 1e-30f;
  for (ActFormat f : {ActFormat::q8_32, ActFormat::q8_256}) {
    const size_t bytes = static_cast<size_t>(act_row_bytes(f, n));
    std::vector<uint8_t> a(bytes, 0xaa), b(bytes, 0x55);
    quantize_act(f, x.data(), a.data(), n);
    for (SimdLevel level : test::runnable_levels()) {
      quantize_act_fn(level)(f, x.data(), b.data(), n);
      EXPECT_EQ(a, b) << simd_level_name(level);
    }
  }
}

}  // namespace
}  // namespace rc::kernels
