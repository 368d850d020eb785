// Prefill matmul kernels on 512-bit registers for Q8_0, Q4_K, Q5_K, Q6_K,
// F16, BF16 and F32 weights (AVX-512 VNNI: Ice Lake / Sapphire Rapids / Zen 4 and later),
// used by CpuMatmul for n >= kGemmMinTokens when the CPU has them.
//
// Layout: the lanes of a register are 16 tokens, not weight elements.
// (F16/BF16/F32: hgemm-avx512.cpp, fp32 activations in token pairs.) The
// 8-bit activations of a group of 16 tokens are interleaved once per matmul
// (q512_pack_acts: four consecutive bytes of each token side by side), so
// one vpdpbusd multiplies four bytes of one weight row, broadcast, with the
// same four bytes of all 16 tokens and adds into that row's 16 token sums.
// No horizontal reduction is ever needed and the weights are read in their
// GGUF layout (K-quants are unpacked to one byte per quant per row tile,
// Q8_0 quants are broadcast straight from the blocks); nothing is repacked
// at load time, so the mmapped file stays the only copy.
//
// Numerical contract: the same as qgemm.h. Every block's integer sum is the
// exact integer the AVX2/VNNI tile kernels form, and the fp32 accumulation
// follows their order (K-quants: one accumulator per (row, token) over the
// super-blocks; Q8_0: eight accumulators, block b into b % 8, summed as
// hsum does), so a (row, token) result is bit-identical to qtile_fn's.
#pragma once

#include <cstdint>

#include "dtype.h"

namespace rc::kernels {

inline constexpr int kQ512Tokens = 16;  // tokens per lane group
inline constexpr int kQ512Rows = 8;     // weight rows per tile, quantized types
inline constexpr int kH512Rows = 12;    // weight rows per tile, F16/BF16/F32

// Bytes of one packed group of 16 tokens for a weight of type t and K columns.
int64_t q512_group_bytes(DType t, int64_t K);
// Packs `tokens` (1..16) activation rows (act_format(t): the fp32 rows for
// F16/BF16/F32; act_stride bytes apart) into one group at dst; the missing tokens are zero (their
// results are computed and dropped).
void q512_pack_acts(DType t, const uint8_t* act, int64_t act_stride, int tokens, int64_t K,
                    uint8_t* dst);
// Per-thread scratch the kernel decodes a row tile into (none for F16, BF16
// and F32: their rows are read in place).
int64_t q512_scratch_bytes(DType t, int64_t K);

struct Q512Args {
  const uint8_t* w;    // first weight row of the tile
  int64_t w_stride;    // bytes between weight rows
  int rows;            // 1..q512_tile_rows(type)
  const uint8_t* act;  // first packed group
  int64_t group_bytes;
  int tokens;  // >= 1: ceil(tokens / 16) groups
  int64_t K;
  float* y;  // y[t * ldy + r]
  int64_t ldy;
  const float* bias;  // [rows] or null
  uint8_t* scratch;   // q512_scratch_bytes, 64-byte aligned
  // The weight rows of the tile this thread runs next, or null: a full tile
  // (q512_tile_rows rows, w_stride apart), prefetched while this tile
  // computes, so its decoding does not wait on memory.
  const uint8_t* next_w = nullptr;
};
using Q512Fn = void (*)(const Q512Args& a);

// The F16/BF16/F32 parts (hgemm-avx512.cpp) behind the three functions above
// and q512_fn.
int64_t h512_group_bytes(int64_t K);
void h512_pack_acts(const uint8_t* act, int64_t act_stride, int tokens, int64_t K, uint8_t* dst);
Q512Fn h512_table(DType t);

// Rows of one call's tile for weights of type t: kQ512Rows or kH512Rows.
int q512_tile_rows(DType t);

// Null when the type has no 512-bit kernel or the CPU lacks AVX-512 VNNI
// (cpu_has_vnni()).
Q512Fn q512_fn(DType t);

}  // namespace rc::kernels
