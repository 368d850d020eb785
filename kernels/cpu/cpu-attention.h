// Paged attention of the fast CPU backend (contract: backend.h attention()).
//
// Flash-style: work is split into tasks of (sequence, kv head, block of up
// to kQueryChunk queries). A task walks the keys its block can see in tiles;
// each tile's K and V rows are found through the page table once (K then
// widened to fp32 and transposed into a scratch tile, V widened as it is
// read, for f16/bf16 pools) and serve every query of the block and
// every query head of the GQA group, as two small matrix products per
// tile (attention-tiles.inc: the task shared by the scalar, AVX2 and
// 512-bit levels). Each (query, head) keeps an online softmax (running max,
// running sum, rescaled accumulator) over each segment of kSegmentKeys
// keys, and the segments' results are folded in key order, so memory stays
// O(block * group * head_dim) whatever the context length, and causality is
// a per-query limit on the tile's keys.
//
// Decode with fewer (sequence, kv head) tasks than the threads can share
// evenly (a long context, few kv heads) splits a sequence's keys instead:
// one task per segment, whose result goes to a state buffer, and the
// segment finished last folds them all (flash-decoding). Segments and
// their folding order are the same either way, so a query's result is the
// same bits in whatever block, chunk or step it is computed, split or not.
#pragma once

#include <algorithm>
#include <span>

#include "backend.h"
#include "simd-level.h"
#include "thread-pool.h"

namespace rc::kernels {

struct AttentionArgs {
  const char* k = nullptr;  // layer's K base, [slots][kv_dim] of kv_type
  const char* v = nullptr;
  DType kv_type = DType::f32;
  int64_t kv_row_bytes = 0;  // bytes of one slot's row
  const float* q = nullptr;  // [rows][q_dim]
  float* out = nullptr;      // [rows][q_dim]
  int page_size = 1;
  int head_dim = 0;
  int group = 1;  // query heads per kv head
  int64_t kv_dim = 0;
  int64_t q_dim = 0;
  float scale = 1.0f;
};

// Queries [i0, i1) of `seq` (i1 - i0 <= kQueryChunk), query heads
// kv_head * group .. + group. Requires group * head_dim <= kMaxGroupDim and
// (i1 - i0) * group <= kMaxQueryRows; the AVX2 task a head dim that is a
// multiple of 8, the 512-bit task one of 16 (attention_task_for picks).
inline constexpr int kMaxGroupDim = 4096;
inline constexpr int kQueryChunk = 16;
inline constexpr int kMaxQueryRows = kQueryChunk * 256;
inline constexpr int kAttentionTile = 64;  // keys per tile
// Keys per online-softmax segment, and per task of a split sequence.
inline constexpr int kSegmentKeys = 4 * kAttentionTile;

// One task's share of a split sequence (its block is all its queries):
// segment `segment` of `segments`, keys [segment * kSegmentKeys, + kSegmentKeys).
// state holds, for the sequence's kv head, every segment's result:
// [segments][rows][head_dim] accumulators, then [segments][rows] running
// maxima and [segments][rows] sums (rows = queries * group). *done counts
// the segments finished (zero before the first); the task that finishes
// last folds them and writes the output.
struct AttentionSplit {
  int segment = 0;
  int segments = 1;
  float* state = nullptr;
  int* done = nullptr;
};
// Floats of one (sequence, kv head)'s AttentionSplit::state.
inline size_t attention_split_floats(int segments, int rows, int head_dim) {
  return size_t(segments) * size_t(rows) * size_t(head_dim + 2);
}

// split == nullptr: all the keys the block sees, folded in the task.
void attention_task_scalar(const AttentionArgs& a, const AttentionSeq& seq, int kv_head, int i0,
                           int i1, const AttentionSplit* split);
void attention_task_avx2(const AttentionArgs& a, const AttentionSeq& seq, int kv_head, int i0,
                         int i1, const AttentionSplit* split);
// On 512-bit registers (attention-avx512.cpp), for CPUs with AVX-512
// F/BW/VL (cpu_has_avx512_matvec).
void attention_task_avx512(const AttentionArgs& a, const AttentionSeq& seq, int kv_head, int i0,
                           int i1, const AttentionSplit* split);

using AttentionTaskFn = void (*)(const AttentionArgs& a, const AttentionSeq& seq, int kv_head,
                                 int i0, int i1, const AttentionSplit* split);
// The task the CPU backend runs at `level` for this head dim: at the AVX2
// level the 512-bit task where the CPU has it and the head dim is a
// multiple of 16, else the AVX2 task where it is a multiple of 8, else the
// scalar task. set_attention_avx512_enabled(false) leaves out the 512-bit
// task (tests and benchmarks comparing it with the AVX2 one).
AttentionTaskFn attention_task_for(SimdLevel level, int head_dim);
void set_attention_avx512_enabled(bool on);
// Whether the tasks ask for their tiles' K and V rows ahead of use
// (attention-tiles.inc); on unless a benchmark comparing both turns it off.
bool attention_prefetch_enabled();
void set_attention_prefetch_enabled(bool on);

// The K and V rows of positions p0 .. p0 + tn - 1 of one kv head (at
// kv_off_bytes in each slot's row), through the sequence's page table: one
// table lookup (and one division) per page the positions touch, not per
// position (a division per row showed up in decode attention's profile).
inline void attention_tile_rows(const AttentionArgs& a, const AttentionSeq& seq,
                                int64_t kv_off_bytes, int p0, int tn, const char** k,
                                const char** v) {
  const int ps = a.page_size;
  for (int t = 0; t < tn;) {
    const int p = p0 + t;
    const int in_page = ps == 1 ? 0 : p % ps;
    const int n = std::min(tn - t, ps - in_page);
    const int64_t slot = int64_t(seq.page_table[ps == 1 ? p : p / ps]) * ps + in_page;
    const int64_t off = slot * a.kv_row_bytes + kv_off_bytes;
    for (int i = 0; i < n; ++i, ++t) {
      k[t] = a.k + off + i * a.kv_row_bytes;
      v[t] = a.v + off + i * a.kv_row_bytes;
    }
  }
}

// kMaxGroupDim * 4 zero bytes, 64-byte aligned: the K and V rows a tile
// reads past the end of its sequence (a row of any head dim and KV type).
const void* kv_zero_row();

// A per-thread buffer of at least `floats` floats, valid until the thread's
// next call; 64-byte aligned.
float* attention_scratch(size_t floats);

// Every sequence's queries against their keys on `pool` (the tasks above);
// a sequence of one query chunk with more than kSegmentKeys keys is split
// by segments when whole tasks would leave the threads idle for more than
// a quarter of the time.
void cpu_attention(ThreadPool& pool, SimdLevel level, KvPool& kv, int layer, const float* q,
                   float* out, std::span<const AttentionSeq> seqs, int n_heads, float scale);

}  // namespace rc::kernels
