#include "attention.cuh"
#include "kv-elem.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "rc-assert.h"

namespace rc::kernels::cuda {
namespace {

constexpr int kThreads = 128;  // 4 warps
constexpr int kRowsPerWarp = kAttnRows / (kThreads / kWarp);

struct AttnParams {
  int head_dim;
  int page_size;
  int group;            // query heads per KV head
  int heads_per_block;  // divides group
  int64_t q_dim;        // n_heads * head_dim
  int64_t kv_dim;       // n_kv_heads * head_dim
  float scale;
  int combine_offset;
};

// Shared memory of one block, in floats: Q tile, K tile (rows padded by 4
// floats against bank conflicts, still 16-byte aligned), V tile, and the
// softmax weights of the current key tile.
__host__ __device__ constexpr int k_stride(int hd) { return hd + 4; }
__host__ __device__ constexpr int64_t smem_floats(int hd) {
  return int64_t(kAttnRows) * hd + int64_t(kAttnKeys) * k_stride(hd) + int64_t(kAttnKeys) * hd +
         int64_t(kAttnRows) * kAttnKeys;
}

// The running state of one warp's rows: row j of warp w is tile row
// w * kRowsPerWarp + j, i.e. query position r / hpb, head h0 + r % hpb.
template <int HC>
struct WarpRows {
  float m[kRowsPerWarp];        // running max of the scores
  float l[kRowsPerWarp];        // running sum of e^(score - m)
  float acc[kRowsPerWarp][HC];  // unnormalized output, dims lane + 32 t
  int pos[kRowsPerWarp];        // the row's query position (causal limit)
  bool ok[kRowsPerWarp];        // row inside the tile
};

// Q of the tile into shared memory, pre-multiplied by the softmax scale.
__device__ __forceinline__ void load_q_tile(float* Qs, const float* __restrict__ q,
                                            const AttnItem& it, int h0, const AttnParams& p) {
  const int hd = p.head_dim, hpb = p.heads_per_block, n_rows = it.n_q * hpb;
  for (int idx = threadIdx.x; idx < kAttnRows * hd; idx += kThreads) {
    const int r = idx / hd, c = idx % hd;
    float v = 0.0f;
    if (r < n_rows) {
      v = q[int64_t(it.q_row + r / hpb) * p.q_dim + int64_t(h0 + r % hpb) * hd + c] * p.scale;
    }
    Qs[idx] = v;
  }
}

template <int HC>
__device__ __forceinline__ void init_rows(WarpRows<HC>& w, const AttnItem& it, int warp, int hpb) {
#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j) {
    const int r = warp * kRowsPerWarp + j;
    w.m[j] = -INFINITY;
    w.l[j] = 0.0f;
    w.ok[j] = r < it.n_q * hpb;
    w.pos[j] = it.pos0 + r / hpb;
#pragma unroll
    for (int t = 0; t < HC; ++t) w.acc[j][t] = 0.0f;
  }
}

// Keys [kt, kt + kAttnKeys) of KV head kvh into shared memory as fp32,
// read through the page table; keys past k_end are zeros (masked later,
// and zeros keep the dot products finite).
template <typename T>
__device__ __forceinline__ void load_kv_tile(float* Ks, float* Vs, const T* __restrict__ K,
                                             const T* __restrict__ V,
                                             const int32_t* __restrict__ table, const AttnItem& it,
                                             int kt, int kvh, const AttnParams& p) {
  const int hd = p.head_dim, ks = k_stride(hd), f4_per_row = hd / 4;
  for (int idx = threadIdx.x; idx < kAttnKeys * f4_per_row; idx += kThreads) {
    const int key = idx / f4_per_row, c = 4 * (idx % f4_per_row);
    const int pos = kt + key;
    float4 kv = make_float4(0.f, 0.f, 0.f, 0.f), vv = kv;
    if (pos < it.k_end) {
      const int64_t slot = int64_t(table[pos / p.page_size]) * p.page_size + pos % p.page_size;
      const int64_t off = slot * p.kv_dim + int64_t(kvh) * hd + c;
      kv = kv_load4(K + off);
      vv = kv_load4(V + off);
    }
    *reinterpret_cast<float4*>(Ks + key * ks + c) = kv;
    *reinterpret_cast<float4*>(Vs + key * hd + c) = vv;
  }
}

// s[j] = Q row j . K row (kt + lane): lane l scores key l of the tile.
__device__ __forceinline__ void score_keys(float (&s)[kRowsPerWarp], const float* Qs,
                                           const float* Ks, int warp, int lane, int hd) {
#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j) s[j] = 0.0f;
  const float* krow = Ks + lane * k_stride(hd);
  for (int c = 0; c < hd; c += 4) {
    const float4 kk = *reinterpret_cast<const float4*>(krow + c);
#pragma unroll
    for (int j = 0; j < kRowsPerWarp; ++j) {
      const float4 qq = *reinterpret_cast<const float4*>(Qs + (warp * kRowsPerWarp + j) * hd + c);
      s[j] += qq.x * kk.x + qq.y * kk.y + qq.z * kk.z + qq.w * kk.w;
    }
  }
}

// Online softmax step for the tile's keys: rescales each row's state to the
// new max and leaves the tile's weights in Ps (row-major, kAttnKeys wide).
template <int HC>
__device__ __forceinline__ void softmax_update(WarpRows<HC>& w, const float (&s)[kRowsPerWarp],
                                               float* Ps, const AttnItem& it, int kt, int warp,
                                               int lane) {
  const int key = kt + lane;
#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j) {
    const bool valid = w.ok[j] && key < it.k_end && key <= w.pos[j];
    const float sj = valid ? s[j] : -INFINITY;
    const float m_new = fmaxf(w.m[j], warp_max(sj));
    float pj = 0.0f, corr = 1.0f;
    if (m_new != -INFINITY) {       // warp-uniform: no valid key yet means nothing to add
      corr = expf(w.m[j] - m_new);  // 0 when m is still -inf
      pj = valid ? expf(sj - m_new) : 0.0f;
      w.l[j] = w.l[j] * corr + warp_sum(pj);
      w.m[j] = m_new;
    }
#pragma unroll
    for (int t = 0; t < HC; ++t) w.acc[j][t] *= corr;
    Ps[(warp * kRowsPerWarp + j) * kAttnKeys + lane] = pj;
  }
  __syncwarp();
}

// acc[j][t] += sum over the tile's keys of P[j][key] * V[key][lane + 32 t].
template <int HC>
__device__ __forceinline__ void accumulate_v(WarpRows<HC>& w, const float* Ps, const float* Vs,
                                             int warp, int lane, int hd) {
  for (int kk = 0; kk < kAttnKeys; kk += 4) {
    float4 pw[kRowsPerWarp];
#pragma unroll
    for (int j = 0; j < kRowsPerWarp; ++j) {
      pw[j] = *reinterpret_cast<const float4*>(Ps + (warp * kRowsPerWarp + j) * kAttnKeys + kk);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
#pragma unroll
      for (int t = 0; t < HC; ++t) {
        const int c = lane + kWarp * t;
        const float vv = c < hd ? Vs[(kk + u) * hd + c] : 0.0f;
#pragma unroll
        for (int j = 0; j < kRowsPerWarp; ++j) {
          const float pu = u == 0 ? pw[j].x : u == 1 ? pw[j].y : u == 2 ? pw[j].z : pw[j].w;
          w.acc[j][t] += pu * vv;
        }
      }
    }
  }
}

// An unsplit tile writes normalized rows to `out`; a split piece writes
// (acc, m, l) to its partial rows for the combine kernel.
template <int HC>
__device__ __forceinline__ void write_rows(const WarpRows<HC>& w, float* __restrict__ out,
                                           float* __restrict__ partial, const AttnItem& it, int h0,
                                           int warp, int lane, const AttnParams& p) {
  const int hd = p.head_dim, hpb = p.heads_per_block;
#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j) {
    if (!w.ok[j]) continue;
    const int r = warp * kRowsPerWarp + j;
    if (it.n_split == 1) {
      float* o = out + int64_t(it.q_row + r / hpb) * p.q_dim + int64_t(h0 + r % hpb) * hd;
      const float inv = 1.0f / w.l[j];  // l > 0: key 0 is always visible in an unsplit tile
#pragma unroll
      for (int t = 0; t < HC; ++t) {
        const int c = lane + kWarp * t;
        if (c < hd) o[c] = w.acc[j][t] * inv;
      }
    } else {
      const int64_t prow = (int64_t(blockIdx.x) * gridDim.y + blockIdx.y) * kAttnRows + r;
      float* pa = partial + prow * (hd + 2);
#pragma unroll
      for (int t = 0; t < HC; ++t) {
        const int c = lane + kWarp * t;
        if (c < hd) pa[c] = w.acc[j][t];
      }
      if (lane == 0) {
        pa[hd] = w.m[j];
        pa[hd + 1] = w.l[j];
      }
    }
  }
}

// Block (item, head block). Lane l of a warp scores key kt + l against the
// warp's kRowsPerWarp rows, then every lane accumulates output dims
// lane, lane + 32, ... (HC = ceil(head_dim / 32) of them). T is the KV
// pool's element type; tiles are widened to fp32 in shared memory.
template <typename T, int HC>
__global__ void __launch_bounds__(kThreads)
    attention_kernel(const T* __restrict__ K, const T* __restrict__ V, const float* __restrict__ q,
                     float* __restrict__ out, const int32_t* __restrict__ blob,
                     float* __restrict__ partial, AttnParams p) {
  extern __shared__ float4 smem4[];
  const int hd = p.head_dim;
  float* Qs = reinterpret_cast<float*>(smem4);
  float* Ks = Qs + kAttnRows * hd;
  float* Vs = Ks + kAttnKeys * k_stride(hd);
  float* Ps = Vs + kAttnKeys * hd;

  const AttnItem it = reinterpret_cast<const AttnItem*>(blob)[blockIdx.x];
  const int32_t* table = blob + it.table;
  const int h0 = blockIdx.y * p.heads_per_block;
  const int kvh = h0 / p.group;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;

  load_q_tile(Qs, q, it, h0, p);
  WarpRows<HC> w;
  init_rows(w, it, warp, p.heads_per_block);
  for (int kt = it.k_begin; kt < it.k_end; kt += kAttnKeys) {
    __syncthreads();  // Qs written (first pass) / previous K, V, P tiles consumed
    load_kv_tile(Ks, Vs, K, V, table, it, kt, kvh, p);
    __syncthreads();
    float s[kRowsPerWarp];
    score_keys(s, Qs, Ks, warp, lane, hd);
    softmax_update(w, s, Ps, it, kt, warp, lane);
    accumulate_v(w, Ps, Vs, warp, lane, hd);
  }
  write_rows(w, out, partial, it, h0, warp, lane, p);
}

// Block (split tile, head block): out = sum_s acc_s e^(m_s - M) / sum_s l_s e^(m_s - M).
__global__ void attention_combine_kernel(const int32_t* __restrict__ blob,
                                         const float* __restrict__ partial, float* __restrict__ out,
                                         AttnParams p) {
  const int first = blob[p.combine_offset + blockIdx.x];
  const AttnItem it = reinterpret_cast<const AttnItem*>(blob)[first];
  const int hd = p.head_dim, hpb = p.heads_per_block, h0 = blockIdx.y * hpb;
  const int n_rows = it.n_q * hpb;
  for (int idx = threadIdx.x; idx < n_rows * hd; idx += blockDim.x) {
    const int r = idx / hd, c = idx % hd;
    auto prow = [&](int s) {
      return partial + ((int64_t(first + s) * gridDim.y + blockIdx.y) * kAttnRows + r) * (hd + 2);
    };
    float M = -INFINITY;
    for (int s = 0; s < it.n_split; ++s) M = fmaxf(M, prow(s)[hd]);
    float L = 0.0f, A = 0.0f;
    for (int s = 0; s < it.n_split; ++s) {
      const float* pa = prow(s);
      const float w = pa[hd] == -INFINITY ? 0.0f : expf(pa[hd] - M);
      L += pa[hd + 1] * w;
      A += pa[c] * w;
    }
    out[int64_t(it.q_row + r / hpb) * p.q_dim + int64_t(h0 + r % hpb) * hd + c] = A / L;
  }
}

// The largest divisor of `group` that is at most kAttnRows.
int heads_per_block_for(int group) {
  for (int d = std::min(group, kAttnRows); d > 1; --d) {
    if (group % d == 0) return d;
  }
  return 1;
}

template <typename T, int HC>
void launch_tiles(const LaunchCtx& ctx, const AttnPlan& plan, const AttnParams& p, const void* k,
                  const void* v, const float* q, float* out, const int32_t* blob, float* partial) {
  const size_t smem = size_t(smem_floats(p.head_dim)) * sizeof(float);
  if (smem > 48 * 1024 &&
      !ctx.check(cudaFuncSetAttribute(attention_kernel<T, HC>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
                 "attention: shared memory opt-in")) {
    return;
  }
  const dim3 grid(unsigned(plan.n_items), unsigned(plan.grid_y));
  attention_kernel<T, HC><<<grid, kThreads, smem, ctx.stream>>>(
      static_cast<const T*>(k), static_cast<const T*>(v), q, out, blob, partial, p);
}

// HC = ceil(head_dim / 32) output dims per lane.
template <typename T>
void launch_for_head_dim(const LaunchCtx& ctx, const AttnPlan& plan, const AttnParams& p,
                         const void* k, const void* v, const float* q, float* out,
                         const int32_t* blob, float* partial) {
  if (p.head_dim <= 32) {
    launch_tiles<T, 1>(ctx, plan, p, k, v, q, out, blob, partial);
  } else if (p.head_dim <= 64) {
    launch_tiles<T, 2>(ctx, plan, p, k, v, q, out, blob, partial);
  } else if (p.head_dim <= 128) {
    launch_tiles<T, 4>(ctx, plan, p, k, v, q, out, blob, partial);
  } else {
    launch_tiles<T, 8>(ctx, plan, p, k, v, q, out, blob, partial);
  }
}

}  // namespace

bool attention_supports(int head_dim) {
  return head_dim > 0 && head_dim % 4 == 0 && head_dim <= kAttnMaxHeadDim;
}

void plan_attention(std::span<const AttentionSeq> seqs, const AttnShape& shape, int64_t n_pages,
                    int sm_count, AttnPlan& plan) {
  RC_ASSERT(shape.n_kv_heads > 0 && shape.n_heads % shape.n_kv_heads == 0);
  const int group = shape.n_heads / shape.n_kv_heads;
  plan.heads_per_block = heads_per_block_for(group);
  plan.grid_y = shape.n_heads / plan.heads_per_block;
  const int q_tile = std::max(1, kAttnRows / plan.heads_per_block);
  const int ps = shape.page_size;

  // Split long key ranges only as far as needed to put ~4 blocks on each SM,
  // and never below 4 key tiles (128 keys) per piece.
  int64_t tiles = 0;
  for (const AttentionSeq& s : seqs) tiles += (s.n_new + q_tile - 1) / q_tile;
  const int64_t blocks = tiles * plan.grid_y;
  const int64_t target = 4LL * std::max(sm_count, 1);
  const int max_split = (blocks == 0 || blocks >= target)
                            ? 1
                            : int(std::min<int64_t>(ceil_div(target, blocks), 1024));

  std::vector<AttnItem> items;
  std::vector<int32_t> combine;
  std::vector<int> item_seq;
  for (size_t si = 0; si < seqs.size(); ++si) {
    const AttentionSeq& s = seqs[si];
    for (int i0 = 0; i0 < s.n_new; i0 += q_tile) {
      const int n_q = std::min(q_tile, s.n_new - i0);
      const int pos0 = s.n_past + i0;
      const int n_keys = pos0 + n_q;
      const int key_tiles = int(ceil_div(n_keys, kAttnKeys));
      int n_split = std::min(max_split, std::max(1, key_tiles / 4));
      const int per = int(ceil_div(key_tiles, n_split));
      n_split = int(ceil_div(key_tiles, per));
      if (n_split > 1) combine.push_back(int32_t(items.size()));
      for (int sp = 0; sp < n_split; ++sp) {
        AttnItem it{};
        it.q_row = s.q_row + i0;
        it.n_q = n_q;
        it.pos0 = pos0;
        it.k_begin = sp * per * kAttnKeys;
        it.k_end = std::min(n_keys, (sp + 1) * per * kAttnKeys);
        it.n_split = n_split;
        it.split = sp;
        items.push_back(it);
        item_seq.push_back(int(si));
      }
    }
  }

  plan.n_items = int(items.size());
  plan.n_combine = int(combine.size());
  plan.combine_offset = plan.n_items * 8;
  plan.blob.clear();
  plan.blob.resize(size_t(plan.combine_offset + plan.n_combine));
  std::copy(combine.begin(), combine.end(), plan.blob.begin() + plan.combine_offset);
  std::vector<int32_t> table_offset(seqs.size());
  for (size_t si = 0; si < seqs.size(); ++si) {
    const AttentionSeq& s = seqs[si];
    const int64_t n_entries = ceil_div(int64_t(s.n_past) + s.n_new, ps);
    table_offset[si] = int32_t(plan.blob.size());
    for (int64_t e = 0; e < n_entries; ++e) {
      const int32_t page = s.page_table[e];
      RC_ASSERT_MSG(page >= 0 && page < n_pages, "attention: page index outside the KV pool");
      plan.blob.push_back(page);
    }
  }
  for (size_t i = 0; i < items.size(); ++i) {
    items[i].table = table_offset[size_t(item_seq[i])];
    std::memcpy(plan.blob.data() + i * 8, &items[i], sizeof(AttnItem));
  }
  plan.partial_floats = plan.n_combine > 0
                            ? int64_t(plan.n_items) * plan.grid_y * kAttnRows * (shape.head_dim + 2)
                            : 0;
}

void launch_attention(const LaunchCtx& ctx, const AttnShape& shape, const AttnPlan& plan,
                      DType kv_type, const void* k_layer, const void* v_layer, const float* q,
                      float* out, const int32_t* blob, float* partial, float scale) {
  if (plan.n_items == 0) return;
  if (!attention_supports(shape.head_dim)) {
    ctx.fail("attention: unsupported head_dim " + std::to_string(shape.head_dim));
    return;
  }
  AttnParams p{};
  p.head_dim = shape.head_dim;
  p.page_size = shape.page_size;
  p.group = shape.n_heads / shape.n_kv_heads;
  p.heads_per_block = plan.heads_per_block;
  p.q_dim = int64_t(shape.n_heads) * shape.head_dim;
  p.kv_dim = int64_t(shape.n_kv_heads) * shape.head_dim;
  p.scale = scale;
  p.combine_offset = plan.combine_offset;
  const bool known = with_kv_type(kv_type, [&](auto tag) {
    launch_for_head_dim<decltype(tag)>(ctx, plan, p, k_layer, v_layer, q, out, blob, partial);
  });
  if (!known) {
    ctx.fail("attention: not a KV pool type");
    return;
  }
  if (!ctx.check_launch("attention")) return;
  if (plan.n_combine > 0) {
    const dim3 grid(unsigned(plan.n_combine), unsigned(plan.grid_y));
    attention_combine_kernel<<<grid, kThreads, 0, ctx.stream>>>(blob, partial, out, p);
    ctx.check_launch("attention combine");
  }
}

}  // namespace rc::kernels::cuda
