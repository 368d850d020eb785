// Integer tile products of quantized weights with 8-bit activations: the
// matmul kernel of the fast CPU backend for Q8_0, Q4_0, Q5_0, Q5_1, Q4_K,
// Q5_K and Q6_K, for any number of tokens (decode is a tile one token wide).
// F16/BF16 weights have tile kernels of the same shape (hgemm-avx2.cpp).
//
// A tile is up to 8 weight rows x `tokens` activation rows. Each weight
// block of the 8 rows is decoded once into bytes and scales and then
// multiplied (maddubs/madd, or VNNI dot instructions where the CPU has
// them) with the matching block of every token, so decoding cost is shared
// by the whole tile and the inner loop is pure int8 multiply-adds.
//
// Numerical contract: the result for (row r, token t) is
//   sum over blocks b of  (scale_w(r, b) * scale_a(t, b)) * isum(r, t, b)
// where isum is the exact integer dot of the block (so its value does not
// depend on instruction order), accumulated in fp32 in a fixed order that
// depends only on K. So a (row, token) result is bit-identical whatever the
// tile shape, the number of tokens in the call, the thread count, or the
// instruction set (AVX2 or VNNI): a prompt prefilled in one chunk or in
// several (each of at least CpuMatmul::kGemmMinTokens) gives the same
// logits. It equals
// dequantize(w) . dequantize_act(quantize_act(x)) up to fp32 rounding.
#pragma once

#include <cstdint>

#include "act-quant.h"
#include "dtype.h"
#include "simd-level.h"

namespace rc::kernels {

inline constexpr int kQTileRows = 8;

// Per-token extra data computed once per matmul from the quantized
// activation row (block scales as a float array, group sums the kernels
// need for weight offsets): qtile_side_bytes(type, K) bytes per token.
int64_t qtile_side_bytes(DType t, int64_t K);
void qtile_prepare_side(DType t, const void* act_row, int64_t K, void* side);

struct QTileArgs {
  const uint8_t* w;     // first weight row of the tile
  int64_t w_stride;     // bytes between weight rows
  int rows;             // 1..kQTileRows
  const uint8_t* act;   // first activation row (act_format(type))
  int64_t act_stride;   // bytes between activation rows
  const uint8_t* side;  // first token's side data
  int64_t side_stride;
  int tokens;  // >= 1
  int64_t K;   // elements per row (a multiple of the block)
  float* y;    // y[t * ldy + r]
  int64_t ldy;
  const float* bias;  // [rows] or null
  float* scratch;     // >= qtile_scratch_floats(tokens) floats, 32-byte aligned
};
inline int64_t qtile_scratch_floats(int tokens) { return int64_t(tokens) * 64; }

using QTileFn = void (*)(const QTileArgs& a);
// Null when the type has no tile kernel at this level (the caller then uses
// row dots).
QTileFn qtile_fn(DType t, SimdLevel level);

// Which tile kernels qtile_fn hands out, process-wide (for benchmarks
// comparing paths in one run; default best): best = VNNI where the CPU has
// it, avx2 = never VNNI, off = none (matmul falls back to row dots and
// dequantize + sgemm). RADIXCHAT_CPU_QGEMM=avx2|off sets the start value.
enum class QTileMode { best, avx2, off };
void set_qtile_mode(QTileMode m);
QTileMode qtile_mode();

// Per-instruction-set tables (qgemm-avx2.cpp, qgemm-vnni.cpp).
QTileFn qtile_avx2(DType t);
QTileFn qtile_vnni(DType t);
// Float weights (F16, BF16, F32) with fp32 activations (act = the fp32
// rows, no side data): F16C + FMA register blocks (hgemm-avx2.cpp). F32
// takes them too, rather than OpenBLAS, so that a token's result is the
// same bits at any token count (sgemm's are not).
QTileFn htile_avx2(DType t);
// The weight kinds of the float kernels (hgemm-avx2.cpp, hgemm-avx512.cpp).
enum class FloatWeight { f16, bf16, f32 };
// Whether this CPU runs the VNNI kernels (AVX-VNNI or AVX-512 VNNI + VL);
// RADIXCHAT_CPU_VNNI=0 in the environment turns them off.
bool cpu_has_vnni();

}  // namespace rc::kernels
