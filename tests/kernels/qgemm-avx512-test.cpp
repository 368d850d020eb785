// The token-lane prefill kernels (512-bit: qgemm-avx512.h; 256-bit:
// qgemm-avx2-lanes.h) against the AVX2 tile kernels of qgemm.h, which
// qgemm-test.cpp checks against the dequantized oracle: a (row, token)
// result must be the same float (that is the numerical contract). 512-bit:
// Q8_0 / Q4_K / Q5_K / Q6_K / F16 / BF16 / F32, token counts around the
// 16-token groups and the 64-token chunks; 256-bit: Q8_0 / Q4_K / Q5_K /
// Q6_K around the 8-token groups and 32-token chunks; both with odd row
// counts (short tiles), odd block counts (Q8_0 tails of eight blocks, F16
// tails of the 8-wide steps), with and without bias; then through the
// backend with 1..4 threads, in one call and in chunks.
#include <gtest/gtest.h>

#include <cstring>

#include "cpu/act-quant.h"
#include "cpu/cpu-backend.h"
#include "cpu/cpu-backends.h"
#include "cpu/lane-pack.h"
#include "cpu/qgemm-avx2-lanes.h"
#include "cpu/qgemm-avx512.h"
#include "cpu/qgemm.h"
#include "kernel-test-util.h"

namespace rc::kernels {
namespace {

const DType kTypes[] = {DType::q8_0, DType::q4_k, DType::q5_k, DType::q6_k,
                        DType::f16,  DType::bf16, DType::f32};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The AVX2 tiles over rows x n: 8-row tiles, every token in one tile.
std::vector<float> avx2_tiles(DType t, const test::OwnedWeight& ow, const std::vector<uint8_t>& q,
                              const std::vector<uint8_t>& side, int n, const float* bias) {
  const int64_t rows = ow.w.rows, K = ow.w.cols, rb = row_bytes(t, K);
  const int64_t ab = act_row_bytes(act_format(t), K), sb = qtile_side_bytes(t, K);
  std::vector<float> y(size_t(n * rows), NAN);
  std::vector<float> scratch(size_t(qtile_scratch_floats(n) + 8));
  float* s = scratch.data();
  s += (8 - (reinterpret_cast<uintptr_t>(s) / 4) % 8) % 8;
  for (int64_t r0 = 0; r0 < rows; r0 += kQTileRows) {
    QTileArgs a;
    a.w = ow.bytes.data() + r0 * rb;
    a.w_stride = rb;
    a.rows = int(std::min<int64_t>(kQTileRows, rows - r0));
    a.act = q.data();
    a.act_stride = ab;
    a.side = side.data();
    a.side_stride = sb;
    a.tokens = n;
    a.K = K;
    a.y = y.data() + r0;
    a.ldy = rows;
    a.bias = bias ? bias + r0 : nullptr;
    a.scratch = s;
    (htile_avx2(t) ? htile_avx2(t) : qtile_avx2(t))(a);
  }
  return y;
}

// A lane kernel over rows x n: all groups packed, tiles of `tile_rows`
// rows and `chunk` tokens (a multiple of the group).
std::vector<float> lane_tiles(const LaneKernel& k, DType t, const test::OwnedWeight& ow,
                              const std::vector<uint8_t>& q, int n, int tile_rows, int chunk,
                              const float* bias) {
  const int64_t rows = ow.w.rows, K = ow.w.cols, rb = row_bytes(t, K);
  const int64_t ab = act_row_bytes(act_format(t), K), gb = k.group_bytes(t, K);
  const int L = k.group_tokens, groups = (n + L - 1) / L;
  std::vector<uint8_t> packed(size_t(groups * gb));
  for (int g = 0; g < groups; ++g) {
    const int t0 = g * L;
    k.pack(t, q.data() + t0 * ab, ab, std::min(L, n - t0), K, packed.data() + g * gb);
  }
  std::vector<uint8_t> scratch(size_t(k.scratch_bytes(t, K) + 64));
  uint8_t* s = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  std::vector<float> y(size_t(n * rows), NAN);
  for (int64_t r0 = 0; r0 < rows; r0 += tile_rows) {
    for (int t0 = 0; t0 < n; t0 += chunk) {
      Q512Args a;
      a.w = ow.bytes.data() + r0 * rb;
      a.w_stride = rb;
      a.rows = int(std::min<int64_t>(tile_rows, rows - r0));
      a.act = packed.data() + t0 / L * gb;
      a.group_bytes = gb;
      a.tokens = std::min(chunk, n - t0);
      a.K = K;
      a.y = y.data() + t0 * rows + r0;
      a.ldy = rows;
      a.bias = bias ? bias + r0 : nullptr;
      a.scratch = s;
      k.fn(a);
    }
  }
  return y;
}

// Random activations for n tokens, quantized with their side data.
struct Acts {
  std::vector<uint8_t> q, side;
};
Acts quantized_acts(DType t, int64_t K, int n, uint32_t seed) {
  const ActFormat f = act_format(t);
  const int64_t ab = act_row_bytes(f, K), sb = qtile_side_bytes(t, K);
  const std::vector<float> x = test::random_vec(size_t(n * K), seed, 2.0f);
  Acts a{std::vector<uint8_t>(size_t(n * ab)),
         std::vector<uint8_t>(size_t(std::max<int64_t>(1, n * sb)))};
  for (int i = 0; i < n; ++i) {
    quantize_act(f, x.data() + i * K, a.q.data() + i * ab, K);
    qtile_prepare_side(t, a.q.data() + i * ab, K, a.side.data() + i * sb);
  }
  return a;
}

TEST(QGemm512, BitIdenticalToAvx2Tiles) {
  if (best_simd_level() != SimdLevel::avx2 || !q512_fn(DType::q8_0)) {
    GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  }
  uint32_t seed = 31;
  for (DType t : kTypes) {
    std::vector<int64_t> ks{256, 2816};
    if (t == DType::q8_0) ks = {32, 416, 3424};
    if (block_elems(t) == 1) ks = {7, 67, 300, 2051};  // 8-wide steps' tails, k-blocks
    for (int64_t K : ks) {
      for (int64_t rows : {1, 8, 13}) {
        const test::OwnedWeight ow = test::make_weight(t, rows, K, seed++);
        const std::vector<float> bias = test::random_vec(size_t(rows), seed++);
        for (int n : {1, 5, 16, 17, 40}) {
          const Acts x = quantized_acts(t, K, n, seed++);
          for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
            const std::vector<float> want = avx2_tiles(t, ow, x.q, x.side, n, b);
            for (int tr : {3, q512_tile_rows(t)}) {
              for (int chunk : {16, 64}) {
                EXPECT_TRUE(
                    same_bits(lane_tiles(lane_kernel_512(t), t, ow, x.q, n, tr, chunk, b), want))
                    << dtype_name(t) << " K " << K << " rows " << rows << " n " << n << " tile "
                    << tr << " chunk " << chunk << (b ? " bias" : "");
              }
            }
          }
        }
      }
    }
  }
}

// Through the backend (the lane path for n >= kGemmMinTokens, best mode)
// with 1..4 threads: the same floats as the AVX2 tiles (QTileMode::avx2),
// in one call or in chunks.
void expect_backend_matches_avx2_tiles(DType t) {
  const int64_t K = block_elems(t) == 1 ? 131 : t == DType::q8_0 ? 288 : 512, rows = 45;
  const int n = 83;
  const test::OwnedWeight ow = test::make_weight(t, rows, K, 41);
  const std::vector<float> x = test::random_vec(size_t(n * K), 42);
  const std::vector<float> bias = test::random_vec(size_t(rows), 43);
  set_qtile_mode(QTileMode::avx2);
  std::vector<float> want(size_t(n * rows));
  make_cpu_backend_at(1, SimdLevel::avx2)->matmul(ow.w, bias.data(), x.data(), want.data(), n);
  set_qtile_mode(QTileMode::best);
  for (int threads = 1; threads <= 4; ++threads) {
    auto be = make_cpu_backend_at(threads, SimdLevel::avx2);
    std::vector<float> all(size_t(n * rows)), parts(size_t(n * rows));
    be->matmul(ow.w, bias.data(), x.data(), all.data(), n);
    int t0 = 0;
    for (int c : {8, 17, 58}) {
      be->matmul(ow.w, bias.data(), x.data() + t0 * K, parts.data() + t0 * rows, c);
      t0 += c;
    }
    EXPECT_TRUE(same_bits(all, want)) << dtype_name(t) << " threads " << threads;
    EXPECT_TRUE(same_bits(parts, want)) << dtype_name(t) << " threads " << threads << " chunks";
  }
}

TEST(QGemm512, BackendMatchesAvx2TilesAnyThreadsAndChunks) {
  if (best_simd_level() != SimdLevel::avx2 || !q512_fn(DType::q8_0)) {
    GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  }
  for (DType t : kTypes) expect_backend_matches_avx2_tiles(t);
}

// The 256-bit kernels: Q8_0 block tails of eight, short tiles, token
// counts around the 8-token groups and the 32-token chunks, with and
// without bias.
TEST(QGemm256, BitIdenticalToAvx2Tiles) {
  if (!q256_fn(DType::q8_0)) GTEST_SKIP() << "no AVX2 on this CPU";
  uint32_t seed = 71;
  for (DType t : {DType::q8_0, DType::q4_k, DType::q5_k, DType::q6_k}) {
    std::vector<int64_t> ks{256, 2816};
    if (t == DType::q8_0) ks = {32, 416, 3424};
    for (int64_t K : ks) {
      for (int64_t rows : {1, 8, 13}) {
        const test::OwnedWeight ow = test::make_weight(t, rows, K, seed++);
        const std::vector<float> bias = test::random_vec(size_t(rows), seed++);
        for (int n : {1, 5, 8, 9, 17, 40}) {
          const Acts x = quantized_acts(t, K, n, seed++);
          for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
            const std::vector<float> want = avx2_tiles(t, ow, x.q, x.side, n, b);
            for (int tr : {3, kQ256Rows}) {
              for (int chunk : {8, 32}) {
                EXPECT_TRUE(
                    same_bits(lane_tiles(lane_kernel_256(t), t, ow, x.q, n, tr, chunk, b), want))
                    << dtype_name(t) << " K " << K << " rows " << rows << " n " << n << " tile "
                    << tr << " chunk " << chunk << (b ? " bias" : "");
              }
            }
          }
        }
      }
    }
  }
}

// Where the CPU lacks VNNI the backend takes the 256-bit kernels
// (elsewhere this checks the 512-bit path or the tiles once more).
TEST(QGemm256, BackendMatchesAvx2TilesAnyThreadsAndChunks) {
  if (best_simd_level() != SimdLevel::avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  for (DType t : {DType::q8_0, DType::q4_k, DType::q5_k, DType::q6_k}) {
    expect_backend_matches_avx2_tiles(t);
  }
}

}  // namespace
}  // namespace rc::kernels
