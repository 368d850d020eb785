// matmul of the fast CPU backend: y[n][rows] = x[n][cols] * w^T (+ bias).
//
// Batch invariance: at the AVX2 level a (row, token) result is the same
// bits whatever n is, so a token's logits do not depend on how its prompt
// was chunked, cached or batched (docs/architecture.md section 7). Every
// path below keeps the tile kernels' numerical contract (qgemm.h):
// - n = 1 (decode): the matvec kernels of matvec.h (rows split over the
//   threads, software prefetch, activations laid out once per call):
//   quantized weights on CPUs with AVX-512 VNNI, float weights everywhere
//   (the tiles' own decode blocks). RADIXCHAT_CPU_MATVEC=0 or
//   set_matvec_enabled(false) turns them off (the tiles then serve n = 1).
// - 2 <= n <= kMatvecMaxTokens (drafting's verifying steps, small batches):
//   the short-step matvec kernels where the weight type has one (matvec.h:
//   K-quants on AVX-512 VNNI), which read each weight row once for all the
//   tokens; the same switches turn them off.
// - n >= kGemmMinTokens: the token-lane kernels (qgemm-avx512.h on CPUs
//   with AVX-512 VNNI, qgemm-avx2-lanes.h on AVX2 ones) for Q8_0, Q4_K,
//   Q5_K, Q6_K and, with VNNI, F16/BF16/F32; QTileMode avx2 or off turns
//   them off.
// - anything else: the tile kernels of qgemm.h, 8 weight rows x up to
//   kTileTokens tokens spread over the threads; quantized weights with
//   activations quantized once per call and integer dots, float weights
//   with F16C + FMA on the fp32 activations (F32 too, rather than
//   OpenBLAS, whose sums depend on n).
// At the scalar level (no AVX2) there are no tiles: n < kGemmMinTokens
// takes one row dot per (row, token), larger n dequantizes tiles of weight
// rows and calls single-threaded OpenBLAS sgemm per thread, so results
// there depend on n (quantized weights multiply the same 8-bit-rounded
// activations in both).
#pragma once

#include <vector>

#include "act-quant.h"
#include "backend.h"
#include "lane-pack.h"
#include "matvec.h"
#include "qgemm.h"
#include "row-dot.h"
#include "thread-pool.h"

namespace rc::kernels {

class CpuMatmul {
 public:
  static constexpr int kGemmMinTokens = 8;
  // Tokens per qgemm tile: accumulators stay in L1, activations in L2.
  static constexpr int kTileTokens = 64;

  CpuMatmul(ThreadPool& pool, SimdLevel level) : pool_(pool), level_(level) {}
  void run(const Weight& w, const float* bias, const float* x, float* y, int n);
  // Backend::matmuls: decode through the matvec kernels prepares x once per
  // weight type and splits the rows of all outputs as one region loop;
  // anything else runs them one by one. Same bits either way.
  void run_many(std::span<const Backend::MatmulOut> outs, const float* x, int n);

 private:
  void run_dots(const Weight& w, const float* bias, const float* x, float* y, int n);
  void run_matvec(MatvecFn fn, const Weight& w, const float* bias, const float* x, float* y);
  void run_matvec_many(MatvecManyFn fn, const Weight& w, const float* bias, const float* x,
                       float* y, int n);
  void run_gemm(const Weight& w, const float* bias, const float* x, float* y, int n);
  // The lane family for weights of type t on this CPU; fn is null when none.
  static LaneKernel lane_kernel(DType t);
  void run_lanes(const LaneKernel& k, const Weight& w, const float* bias, const float* x, float* y,
                 int n);
  void run_qtiles(QTileFn tile, const Weight& w, const float* bias, const float* x, float* y,
                  int n);
  void quantize_acts(const Weight& w, const float* x, int n, bool side);

  ThreadPool& pool_;
  SimdLevel level_;
  MatvecActBuffer matvec_act_;  // one token's activation (matvec.h)
  // run_many: the activation per output (laid out once per weight type) and
  // each output's rows in the loop's one index space [first_row, + rows).
  struct ManyPart {
    MatvecFn fn;
    const MatvecAct* act;
    const uint8_t* w;
    int64_t row_bytes, first_row, rows;
    const float* bias;
    float* y;
  };
  std::vector<MatvecActBuffer> many_acts_;
  std::vector<MatvecActBuffer> step_acts_;  // run_matvec_many: one per token
  std::vector<MatvecAct> step_views_;
  std::vector<ManyPart> many_parts_;
  std::vector<uint8_t> act_q_;                     // [n] activation rows in act_format(w.type)
  std::vector<uint8_t> act_side_;                  // [n] qtile_side_bytes per token
  std::vector<std::vector<float>> scratch_;        // per thread: qtile accumulators
  std::vector<uint8_t> act_packed_;                // run_lanes: token groups
  std::vector<std::vector<uint8_t>> row_scratch_;  // run_lanes: per thread, decoded rows
  std::vector<float> act_f32_;                     // [n][cols]: the same rounded back to fp32
  std::vector<std::vector<float>> tiles_;          // per thread: [tile rows][cols]
};

// Converts `rows` consecutive rows of w starting at `row0` to fp32 (dst is
// [rows][w.cols]), with the SIMD level's dequantizers.
void dequantize_rows(const Weight& w, int64_t row0, int64_t rows, float* dst, SimdLevel level);

}  // namespace rc::kernels
