#include "cpu-attention.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "host-memory.h"
#include "matvec.h"
#include "rc-assert.h"

namespace rc::kernels {

namespace {
std::atomic<bool> avx512_on{true};
std::atomic<bool> prefetch_on{true};
}  // namespace

void set_attention_avx512_enabled(bool on) { avx512_on.store(on); }
bool attention_prefetch_enabled() { return prefetch_on.load(std::memory_order_relaxed); }
void set_attention_prefetch_enabled(bool on) { prefetch_on.store(on); }

AttentionTaskFn attention_task_for(SimdLevel level, int head_dim) {
  if (level != SimdLevel::avx2) return attention_task_scalar;
  if (head_dim % 16 == 0 && avx512_on.load() && cpu_has_avx512_matvec()) {
    return attention_task_avx512;
  }
  return head_dim % 8 == 0 ? attention_task_avx2 : attention_task_scalar;
}

const void* kv_zero_row() {
  alignas(64) static const float zeros[kMaxGroupDim] = {};
  return zeros;
}

float* attention_scratch(size_t floats) {
  struct Buffer {
    float* p = nullptr;
    size_t n = 0;
    ~Buffer() { host_free(p); }
  };
  thread_local Buffer b;
  if (b.n < floats) {
    host_free(b.p);
    b.p = static_cast<float*>(host_alloc(floats * sizeof(float)));
    RC_ASSERT(b.p != nullptr);
    b.n = floats;
  }
  return b.p;
}
void cpu_attention(ThreadPool& pool, SimdLevel level, KvPool& kv, int layer, const float* q,
                   float* out, std::span<const AttentionSeq> seqs, int n_heads, float scale) {
  const KvPoolShape& s = kv.shape();
  RC_ASSERT(n_heads > 0 && n_heads % s.n_kv_heads == 0);
  AttentionArgs a;
  a.k = static_cast<const char*>(kv.k(layer));
  a.v = static_cast<const char*>(kv.v(layer));
  a.kv_type = s.type;
  a.q = q;
  a.out = out;
  a.page_size = s.page_size;
  a.head_dim = s.head_dim;
  a.group = n_heads / s.n_kv_heads;
  a.kv_dim = int64_t(s.n_kv_heads) * s.head_dim;
  a.kv_row_bytes = a.kv_dim * kv_elem_bytes(s.type);
  a.q_dim = int64_t(n_heads) * s.head_dim;
  a.scale = scale;

  // Task t of sequence j: first_task[j] <= t < first_task[j + 1]; within a
  // sequence, tasks run kv head fastest so neighbours share query chunks
  // (or, split, segments).
  const int threads = pool.size();
  std::vector<int64_t> first_task(seqs.size() + 1, 0);
  int64_t unsplit_tasks = 0;
  for (const AttentionSeq& sq : seqs)
    unsplit_tasks += int64_t((sq.n_new + kQueryChunk - 1) / kQueryChunk) * s.n_kv_heads;
  // Splitting pays where whole tasks would leave threads idle for more than
  // a quarter of the time (one kv head on two threads, four on three, eight
  // on sixteen: decode's tasks take about as long each); only one-chunk
  // sequences (decode) split.
  const int64_t rounds = (unsplit_tasks + threads - 1) / threads;
  const bool split_some = threads > 1 && 4 * rounds * threads > 5 * unsplit_tasks;
  thread_local std::vector<float> split_state;
  thread_local std::vector<int> split_done;
  // Sequence j's split, if any: its segments, and where its kv heads'
  // states (per_head floats each) and counters start.
  struct SeqSplit {
    int segments = 0;  // 0: not split
    size_t state_at = 0, per_head = 0, done_at = 0;
  };
  std::vector<SeqSplit> splits(seqs.size());
  size_t state_floats = 0, done_ints = 0;
  for (size_t j = 0; j < seqs.size(); ++j) {
    const int n_new = seqs[j].n_new, n_keys = seqs[j].n_past + n_new;
    const int chunks = (n_new + kQueryChunk - 1) / kQueryChunk;
    SeqSplit& sp = splits[j];
    if (split_some && chunks == 1 && n_keys > kSegmentKeys) {
      sp.segments = (n_keys + kSegmentKeys - 1) / kSegmentKeys;
      sp.per_head = attention_split_floats(sp.segments, n_new * a.group, a.head_dim);
      sp.state_at = state_floats;
      sp.done_at = done_ints;
      state_floats += size_t(s.n_kv_heads) * sp.per_head;
      done_ints += size_t(s.n_kv_heads);
    }
    first_task[j + 1] =
        first_task[j] + int64_t(sp.segments > 0 ? sp.segments : chunks) * s.n_kv_heads;
  }
  if (split_state.size() < state_floats) split_state.resize(state_floats);
  split_done.assign(done_ints, 0);
  // The caller's buffers, by address: a worker naming them would get its own.
  float* const state = split_state.data();
  int* const done = split_done.data();
  const AttentionTaskFn task_fn = attention_task_for(level, s.head_dim);
  pool.parallel_for(first_task.back(), 1, [&](int64_t t0, int64_t t1, int) {
    for (int64_t t = t0; t < t1; ++t) {
      const size_t j = size_t(std::upper_bound(first_task.begin(), first_task.end(), t) -
                              first_task.begin() - 1);
      const int64_t local = t - first_task[j];
      const int kv_head = int(local % s.n_kv_heads);
      const int unit = int(local / s.n_kv_heads);  // query chunk, or segment
      const SeqSplit& sp = splits[j];
      if (sp.segments > 0) {
        const AttentionSplit split{unit, sp.segments,
                                   state + sp.state_at + size_t(kv_head) * sp.per_head,
                                   done + sp.done_at + size_t(kv_head)};
        task_fn(a, seqs[j], kv_head, 0, seqs[j].n_new, &split);
        continue;
      }
      const int i0 = unit * kQueryChunk;
      const int i1 = std::min(seqs[j].n_new, i0 + kQueryChunk);
      task_fn(a, seqs[j], kv_head, i0, i1, nullptr);
    }
  });
}

}  // namespace rc::kernels
