// Paged attention of the fast CPU backend (contract: backend.h attention()).
//
// Work is split into tasks of (sequence, kv head, run of up to kQueryChunk
// queries); a task handles all query heads that share its kv head, so each
// K/V row it reads through the page table serves the whole GQA group. Each
// query keeps an online softmax (running max, running sum, rescaled
// accumulator) over tiles of keys, so memory is O(head_dim) per head and
// the page table is walked once per tile.
#pragma once

#include <span>

#include "backend.h"
#include "simd-level.h"
#include "thread-pool.h"

namespace rc::kernels {

struct AttentionArgs {
  const float* k = nullptr;  // layer's K base, [slots][kv_dim]
  const float* v = nullptr;
  const float* q = nullptr;  // [rows][q_dim]
  float* out = nullptr;      // [rows][q_dim]
  int page_size = 1;
  int head_dim = 0;
  int group = 1;  // query heads per kv head
  int64_t kv_dim = 0;
  int64_t q_dim = 0;
  float scale = 1.0f;
};

// Queries [i0, i1) of `seq`, query heads kv_head * group .. + group.
// Requires group * head_dim <= kMaxGroupDim.
inline constexpr int kMaxGroupDim = 4096;
void attention_task_scalar(const AttentionArgs& a, const AttentionSeq& seq, int kv_head, int i0,
                           int i1);
void attention_task_avx2(const AttentionArgs& a, const AttentionSeq& seq, int kv_head, int i0,
                         int i1);

void cpu_attention(ThreadPool& pool, SimdLevel level, KvPool& kv, int layer, const float* q,
                   float* out, std::span<const AttentionSeq> seqs, int n_heads, float scale);

}  // namespace rc::kernels
