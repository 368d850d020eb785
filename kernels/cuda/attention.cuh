// Paged attention over the device KV pool, for prefill chunks and decode
// alike: causal over the cached prefix pages plus the chunk's own, GQA, an
// online softmax, any page_size.
//
// Work is cut into tiles: up to kAttnRows query rows of one sequence that
// share one KV head (q_tile query positions x heads_per_block heads of that
// head's group). When tiles are too few to fill the device (decode of a few
// long sequences), a tile's key range is split in pieces of whole key tiles
// that run in parallel and write partial results (running max, sum and
// unnormalised output), and a second kernel combines them
// (flash-decoding). The plan is made on the host, because page tables are
// host memory by contract, and uploaded as one int32 "blob" per call:
//   [AttnItem x n_items][first item of each split tile x n_combine][tables]
// The blob is the same for every layer of a step, so the backend uploads it
// once per step (see cuda-backend.cu's HostMirror).
//
// Limits: head_dim a multiple of 4 and at most 256 (every llama/qwen2 model
// has 64, 80, 96, 128 or 256); the backend refuses other shapes when the KV
// pool is made.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend.h"
#include "cuda-common.cuh"

namespace rc::kernels::cuda {

inline constexpr int kAttnRows = 16;  // query rows (position x head) per block
inline constexpr int kAttnKeys = 32;  // keys per shared-memory tile (one per lane)
inline constexpr int kAttnMaxHeadDim = 256;

// One block's work; all fields are int32 so the blob is one int32 array.
struct AttnItem {
  int32_t q_row;    // first query row of the tile (row of q and out)
  int32_t n_q;      // query positions in the tile, 1 .. q_tile
  int32_t pos0;     // position of the first of them
  int32_t k_begin;  // keys [k_begin, k_end) of this split; keys past a
  int32_t k_end;    //   query's own position are masked (causal)
  int32_t table;    // blob offset of the sequence's page table
  int32_t n_split;  // pieces of this tile; 1: the block writes `out` itself
  int32_t split;    // this piece's index; a tile's pieces are consecutive items
};
static_assert(sizeof(AttnItem) == 8 * sizeof(int32_t));

struct AttnPlan {
  std::vector<int32_t> blob;
  int n_items = 0;
  int n_combine = 0;
  int combine_offset = 0;      // blob offset of the combine list
  int heads_per_block = 1;     // heads of one KV group per block (divides the group)
  int grid_y = 1;              // n_heads / heads_per_block
  int64_t partial_floats = 0;  // scratch the split pieces need (0: no splits)
};

struct AttnShape {
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int page_size = 1;
};

// True when the kernels support this head_dim.
bool attention_supports(int head_dim);

// Builds the plan for `seqs` (host page tables); n_pages bounds every page
// index (checked, RC_ASSERT like the reference backend). sm_count sizes the
// split so that about four blocks per SM are in flight.
void plan_attention(std::span<const AttentionSeq> seqs, const AttnShape& shape, int64_t n_pages,
                    int sm_count, AttnPlan& plan);

// k_layer/v_layer: the layer's K and V arrays of the pool, elements of
// kv_type (f32, f16 or bf16; tiles are widened to fp32 in shared memory); q/out:
// [rows][n_heads * head_dim]; blob: the plan's blob in device memory;
// partial: plan.partial_floats of device scratch (unused without splits).
void launch_attention(const LaunchCtx& ctx, const AttnShape& shape, const AttnPlan& plan,
                      DType kv_type, const void* k_layer, const void* v_layer, const float* q,
                      float* out, const int32_t* blob, float* partial, float scale);

}  // namespace rc::kernels::cuda
