// Shared parts of the token-lane prefill kernels (qgemm-avx512.h,
// qgemm-avx2-lanes.h): each family's entry points as one LaneKernel; the
// activation groups of quantized weights, `lanes` tokens' 8-bit
// activations interleaved four bytes at a time so that one register load
// holds the same four elements of every token of the group; and the size
// of a decoded K-quant weight row.
//
// Group layout: quants [K/4][lanes][4 bytes]; then the block scales
// [K/block][lanes] as fp32; then (K-quants) integer terms [..][lanes]:
//   Q4_K / Q5_K  the pairs (bsum[2p], bsum[2p+1]) as two int16, [K/64]
//   Q6_K         -32 times each 16-element sum as int32 [K/16]
//                (LaneFormat::q6_pair_sums: the 16-element sums of each 32
//                elements as two int16 [K/32] instead)
// Missing tokens of a short group are zero (their results are dropped).
#pragma once

#include <cstdint>

#include "dtype.h"
#include "qgemm-avx512.h"

namespace rc::kernels {

// A token-lane kernel family: its kernel for one weight type and what the
// caller needs to feed it.
struct LaneKernel {
  Q512Fn fn = nullptr;   // null: no kernel for this type on this CPU
  int group_tokens = 0;  // tokens per packed group
  int tile_rows = 0;     // weight rows per call
  int64_t (*group_bytes)(DType, int64_t) = nullptr;
  void (*pack)(DType, const uint8_t*, int64_t, int, int64_t, uint8_t*) = nullptr;
  int64_t (*scratch_bytes)(DType, int64_t) = nullptr;
};
LaneKernel lane_kernel_512(DType t);  // qgemm-avx512.h
LaneKernel lane_kernel_256(DType t);  // qgemm-avx2-lanes.h

struct LaneFormat {
  int lanes;          // tokens per group
  bool q8_offset;     // Q8_0 quants stored as x + 128 (unsigned bytes)
  bool q6_pair_sums;  // Q6_K extra terms as int16 pairs of plain sums
};

int64_t lane_group_bytes(const LaneFormat& f, DType t, int64_t K);
// Packs `tokens` (1..f.lanes) activation rows (act_format(t), act_stride
// bytes apart) of a Q8_0 or K-quant weight into one group at dst.
void lane_pack_acts(const LaneFormat& f, DType t, const uint8_t* act, int64_t act_stride,
                    int tokens, int64_t K, uint8_t* dst);

// Bytes of one decoded K-quant weight row (lane-kquant-rows.inc), a multiple
// of 64: quants as bytes [K], sub-block scales as int32 [K/32, Q6_K K/16],
// then per super-block d, dmin (fp32) and the min pairs (m[2p], m[2p+1]) as
// two int16 [4].
int64_t kquant_row_bytes(DType t, int64_t K);
// Sub-blocks of a K-quant row: one scale each.
inline int64_t kquant_sub_blocks(DType t, int64_t K) { return t == DType::q6_k ? K / 16 : K / 32; }

}  // namespace rc::kernels
