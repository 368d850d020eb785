// Prefill matmul kernels on 256-bit registers for Q8_0, Q4_K, Q5_K and Q6_K
// weights, for CPUs with AVX2 but no VNNI (Haswell .. Zen 3), used by
// CpuMatmul for n >= kGemmMinTokens in place of the tiles of qgemm.h.
//
// Layout: the lanes of a register are 8 tokens, as in qgemm-avx512.h (16
// there). The 8-bit activations of a group of 8 tokens are interleaved
// once per matmul (q256_pack_acts: four consecutive bytes of each token side
// by side), so one maddubs multiplies four bytes of one weight row,
// broadcast, with the same four bytes of all 8 tokens, and madd turns them
// into that row's 8 token sums. The tile kernels of qgemm.h keep one
// register per block and must reduce eight lanes per (row, token, block);
// here no horizontal reduction is needed, which saves a large share of the
// Q8_0 tile's time on CPUs with slow horizontal adds. maddubs takes an unsigned and a signed
// operand: Q8_0 multiplies the weights' magnitudes, decoded once per row
// tile, with the activations carrying the weights' signs (vpsignb), as the
// tiles do; K-quants (unsigned quants, decoded to bytes once per row tile
// as in qgemm-avx512.h) add several pair sums in 16 bits before one madd
// by the sub-block scale, half the multiplies of the tiles.
//
// Numerical contract: the same as qgemm.h and qgemm-avx512.h. Every block's
// integer sum is exact, and the fp32 accumulation follows the tiles' order
// (K-quants: one accumulator per (row, token) over the super-blocks; Q8_0:
// eight accumulators, block b into b % 8, summed as hsum does), so a (row,
// token) result is bit-identical to qtile_fn's.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "qgemm-avx512.h"

namespace rc::kernels {

inline constexpr int kQ256Tokens = 8;  // tokens per lane group
inline constexpr int kQ256Rows = 8;    // weight rows per tile

// Bytes of one packed group of 8 tokens for a weight of type t, K columns.
int64_t q256_group_bytes(DType t, int64_t K);
// Packs `tokens` (1..8) activation rows (act_format(t), act_stride bytes
// apart) into one group at dst; the missing tokens are zero (their results
// are computed and dropped).
void q256_pack_acts(DType t, const uint8_t* act, int64_t act_stride, int tokens, int64_t K,
                    uint8_t* dst);
// Per-thread scratch the kernel decodes a row tile into.
int64_t q256_scratch_bytes(DType t, int64_t K);

// The kernel takes Q512Args with groups of kQ256Tokens tokens and tiles of
// up to kQ256Rows rows (next_w is not used). Null when the type has no
// 256-bit lane kernel or the CPU lacks AVX2.
Q512Fn q256_fn(DType t);

}  // namespace rc::kernels
