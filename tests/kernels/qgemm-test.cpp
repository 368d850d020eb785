// The tile kernels (qgemm.h) against an independent oracle: the
// double-precision dot of dequantize_row(w) with dequantize_act(quantize_act(x))
// (reference dequantizers of quant.cpp / act-quant.cpp), for Q8_0, Q4_0,
// Q5_0, Q5_1, Q4_K, Q5_K, Q6_K (and F32/F16/BF16 with the fp32 activations), on both instruction
// sets this CPU runs, with odd block counts (tails of a group of eight 32-blocks), short tiles and
// many tokens. Then the bit-exactness the cache relies on: a (row, token) result is the same float
// for any tile shape, token count, thread count and instruction set.
#include <gtest/gtest.h>

#include <cstring>

#include "cpu/act-quant.h"
#include "cpu/cpu-backend.h"
#include "cpu/cpu-backends.h"
#include "cpu/qgemm.h"
#include "kernel-test-util.h"

namespace rc::kernels {
namespace {

using test::expect_close;

const DType kTypes[] = {DType::f32,  DType::f16,  DType::bf16, DType::q8_0, DType::q4_0,
                        DType::q5_0, DType::q5_1, DType::q4_k, DType::q5_k, DType::q6_k};

// Quantized activations and side data of n tokens, as CpuMatmul lays them out.
struct Acts {
  std::vector<uint8_t> q, side;
  int64_t ab = 0, sb = 0;
  std::vector<float> rounded;  // dequantize_act of q, [n][K]
};

Acts make_acts(DType t, const std::vector<float>& x, int64_t K) {
  Acts a;
  const ActFormat f = act_format(t);
  const int64_t n = int64_t(x.size()) / K;
  a.ab = act_row_bytes(f, K);
  a.sb = qtile_side_bytes(t, K);
  a.q.resize(size_t(n * a.ab));
  a.side.resize(size_t(std::max<int64_t>(1, n * a.sb)));
  a.rounded.resize(x.size());
  for (int64_t i = 0; i < n; ++i) {
    quantize_act(f, x.data() + i * K, a.q.data() + i * a.ab, K);
    dequantize_act(f, a.q.data() + i * a.ab, a.rounded.data() + i * K, K);
    qtile_prepare_side(t, a.q.data() + i * a.ab, K, a.side.data() + i * a.sb);
  }
  return a;
}

// Runs one tile kernel over rows x n in tiles of (tile_rows, tile_tokens).
std::vector<float> run_tiles(QTileFn fn, const test::OwnedWeight& ow, const Acts& a, int n,
                             int tile_rows, int tile_tokens, const float* bias) {
  const int64_t rows = ow.w.rows, K = ow.w.cols, rb = row_bytes(ow.w.type, K);
  std::vector<float> y(size_t(n * rows), NAN);
  std::vector<float> scratch(size_t(qtile_scratch_floats(tile_tokens) + 8));
  float* s = scratch.data();
  s += (8 - (reinterpret_cast<uintptr_t>(s) / 4) % 8) % 8;
  for (int64_t r0 = 0; r0 < rows; r0 += tile_rows) {
    for (int t0 = 0; t0 < n; t0 += tile_tokens) {
      QTileArgs q;
      q.w = ow.bytes.data() + r0 * rb;
      q.w_stride = rb;
      q.rows = int(std::min<int64_t>(tile_rows, rows - r0));
      q.act = a.q.data() + t0 * a.ab;
      q.act_stride = a.ab;
      q.side = a.side.data() + t0 * a.sb;
      q.side_stride = a.sb;
      q.tokens = std::min(tile_tokens, n - t0);
      q.K = K;
      q.y = y.data() + t0 * rows + r0;
      q.ldy = rows;
      q.bias = bias ? bias + r0 : nullptr;
      q.scratch = s;
      fn(q);
    }
  }
  return y;
}

std::vector<std::pair<const char*, QTileFn>> kernels_for(DType t) {
  std::vector<std::pair<const char*, QTileFn>> k;
  if (best_simd_level() != SimdLevel::avx2) return k;
  if (QTileFn f = htile_avx2(t)) k.emplace_back("f16c", f);
  if (QTileFn f = qtile_avx2(t)) k.emplace_back("avx2", f);
  if (cpu_has_vnni()) {
    if (QTileFn f = qtile_vnni(t)) k.emplace_back("vnni", f);
  }
  return k;
}

std::vector<int64_t> lengths(DType t) {
  // 32-blocks: 1 block, a group and a tail of 5, 13 groups + 3 (K = 3424).
  if (block_elems(t) == 1) return {7, 67, 2051};  // tails of the 8-wide steps
  if (block_elems(t) == 32) return {32, 416, 3424};
  return {256, 768, 2816};
}

TEST(QGemm, MatchesDequantizedOracle) {
  for (DType t : kTypes) {
    const auto ks = kernels_for(t);
    if (ks.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
    uint32_t seed = 7;
    for (int64_t K : lengths(t)) {
      for (int64_t rows : {1, 8, 13}) {
        const test::OwnedWeight ow = test::make_weight(t, rows, K, seed++);
        std::vector<float> wd(size_t(rows * K));
        for (int64_t r = 0; r < rows; ++r) {
          dequantize_row(t, ow.bytes.data() + r * row_bytes(t, K), wd.data() + r * K, K);
        }
        const std::vector<float> bias = test::random_vec(size_t(rows), seed++);
        const int n = 11;
        const Acts a = make_acts(t, test::random_vec(size_t(n * K), seed++, 2.0f), K);
        std::vector<float> want(size_t(n * rows)), scale(want.size());
        for (int tok = 0; tok < n; ++tok) {
          for (int64_t r = 0; r < rows; ++r) {
            double s = 0.0, m = 0.0;
            for (int64_t k = 0; k < K; ++k) {
              const double p = double(wd[size_t(r * K + k)]) * a.rounded[size_t(tok * K + k)];
              s += p;
              m += std::fabs(p);
            }
            want[size_t(tok * rows + r)] = float(s + bias[size_t(r)]);
            scale[size_t(tok * rows + r)] = float(m + std::fabs(bias[size_t(r)]));
          }
        }
        for (const auto& [name, fn] : ks) {
          const std::vector<float> got = run_tiles(fn, ow, a, n, 8, 4, bias.data());
          expect_close(got.data(), want.data(), scale.data(), got.size(), 1e-5,
                       std::string(dtype_name(t)) + " " + name + " K " + std::to_string(K) +
                           " rows " + std::to_string(rows));
        }
      }
    }
  }
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(QGemm, BitIdenticalForAnyTileShapeAndInstructionSet) {
  for (DType t : kTypes) {
    const auto ks = kernels_for(t);
    if (ks.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
    const int64_t K = block_elems(t) == 1 ? 67 : block_elems(t) == 32 ? 416 : 768, rows = 21;
    const int n = 9;
    const test::OwnedWeight ow = test::make_weight(t, rows, K, 11);
    const Acts a = make_acts(t, test::random_vec(size_t(n * K), 12), K);
    const std::vector<float> base = run_tiles(ks[0].second, ow, a, n, 8, n, nullptr);
    for (const auto& [name, fn] : ks) {
      for (int tr : {1, 3, 8}) {
        for (int tt : {1, 2, 5, 9}) {
          EXPECT_TRUE(same_bits(run_tiles(fn, ow, a, n, tr, tt, nullptr), base))
              << dtype_name(t) << " " << name << " tile " << tr << "x" << tt;
        }
      }
    }
  }
}

// Through the backend: one call with n tokens equals the same tokens in
// several calls of at least kGemmMinTokens (tiles of 64 tokens, so n = 70
// spans two), for 1..4 threads; float weights (F32/F16/BF16) take the
// tiles in decode too, so for them single-token calls are also
// bit-identical.
TEST(QGemm, BackendBitIdenticalAcrossChunkings) {
  if (best_simd_level() != SimdLevel::avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  for (DType t : kTypes) {
    const int64_t K = block_elems(t) == 1 ? 131 : block_elems(t) == 32 ? 288 : 512, rows = 45;
    const int n = 70;
    const test::OwnedWeight ow = test::make_weight(t, rows, K, 21);
    const std::vector<float> x = test::random_vec(size_t(n * K), 22);
    const std::vector<float> bias = test::random_vec(size_t(rows), 23);
    std::vector<int> chunks{8, 13, 49};
    if (act_format(t) == ActFormat::f32) chunks = std::vector<int>(size_t(n), 1);
    std::vector<float> ref;
    for (int threads = 1; threads <= 4; ++threads) {
      auto be = make_cpu_backend_at(threads, SimdLevel::avx2);
      std::vector<float> all(size_t(n * rows)), parts(size_t(n * rows));
      be->matmul(ow.w, bias.data(), x.data(), all.data(), n);
      int t0 = 0;
      for (int c : chunks) {
        be->matmul(ow.w, bias.data(), x.data() + t0 * K, parts.data() + t0 * rows, c);
        t0 += c;
      }
      EXPECT_TRUE(same_bits(all, parts)) << dtype_name(t) << " threads " << threads;
      if (ref.empty()) ref = all;
      EXPECT_TRUE(same_bits(all, ref)) << dtype_name(t) << " threads " << threads << " vs 1";
    }
  }
}

}  // namespace
}  // namespace rc::kernels
