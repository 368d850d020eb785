// CpuMatmul::run_lanes: prefill through the token-lane kernels
// (qgemm-avx512.h, qgemm-avx2-lanes.h).
#include <algorithm>

#include "cpu-matmul.h"

namespace rc::kernels {

LaneKernel CpuMatmul::lane_kernel(DType t) {
  if (LaneKernel k = lane_kernel_512(t); k.fn) return k;
  // Measured only without VNNI; with AVX-VNNI the tiles keep vpdpbusd.
  if (LaneKernel k = lane_kernel_256(t); k.fn && !cpu_has_vnni()) return k;
  return {};
}

void CpuMatmul::run_lanes(const LaneKernel& k, const Weight& w, const float* bias, const float* x,
                          float* y, int n) {
  const int64_t K = w.cols, rows = w.rows;
  const ActFormat f = act_format(w.type);
  const int64_t ab = act_row_bytes(f, K), gb = k.group_bytes(w.type, K);
  const int64_t L = k.group_tokens, groups = (n + L - 1) / L;
  const bool float_acts = f == ActFormat::f32;
  if (!float_acts) act_q_.resize(size_t(n * ab));
  act_packed_.resize(size_t(groups * gb));
  const QuantizeActFn quantize = quantize_act_fn(level_);
  // One hand-off quantizes (float weights: no rounding) and interleaves
  // each group of tokens.
  pool_.parallel_for(groups, 1, [&](int64_t g0, int64_t g1, int) {
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t t0 = g * L, nt = std::min<int64_t>(L, n - t0);
      const uint8_t* rows_at = reinterpret_cast<const uint8_t*>(x + t0 * K);
      if (!float_acts) {
        for (int64_t t = t0; t < t0 + nt; ++t) quantize(f, x + t * K, act_q_.data() + t * ab, K);
        rows_at = act_q_.data() + t0 * ab;
      }
      k.pack(w.type, rows_at, ab, int(nt), K, act_packed_.data() + g * gb);
    }
  });
  const int64_t sb = k.scratch_bytes(w.type, K);
  row_scratch_.resize(size_t(pool_.size()));
  for (auto& s : row_scratch_) s.resize(size_t(sb + 64));
  // Tasks: row tiles x chunks of four groups, chunk by chunk so the threads
  // share one chunk's activations in cache; several tasks per thread
  // balance a preempted one. One chunk (up to 64 tokens, a chat turn): the
  // row tiles by regions, so each thread's next tile, which its kernel
  // prefetches as it computes, is nearly always the tile it takes next
  // (two unprefetched tiles per matmul instead of one per range).
  constexpr int64_t kChunkGroups = 4;
  const int64_t tile_rows = k.tile_rows;
  const int64_t tiles = (rows + tile_rows - 1) / tile_rows;
  const int64_t chunks = (groups + kChunkGroups - 1) / kChunkGroups;
  const bool by_regions = chunks == 1;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const int64_t rb = row_bytes(w.type, K);
  auto task_range = [&](int64_t i0, int64_t i1, int thread) {
    uint8_t* scratch = row_scratch_[size_t(thread)].data();
    scratch += (64 - reinterpret_cast<uintptr_t>(scratch) % 64) % 64;
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t c = i / tiles, r0 = (i % tiles) * tile_rows;
      const int64_t g0 = c * kChunkGroups, t0 = g0 * L;
      Q512Args a;
      a.w = wbase + r0 * rb;
      a.w_stride = rb;
      a.rows = int(std::min<int64_t>(tile_rows, rows - r0));
      a.act = act_packed_.data() + g0 * gb;
      a.group_bytes = gb;
      a.tokens = int(std::min<int64_t>(kChunkGroups * L, n - t0));
      a.K = K;
      a.y = y + t0 * rows + r0;
      a.ldy = rows;
      a.bias = bias ? bias + r0 : nullptr;
      a.scratch = scratch;
      // The next task of this range (by regions: of this thread, nearly
      // always): the next row tile (same chunk).
      const int64_t nr0 = r0 + tile_rows;
      a.next_w = (i + 1 < i1 || by_regions) && nr0 + tile_rows <= rows ? wbase + nr0 * rb : nullptr;
      k.fn(a);
    }
  };
  if (by_regions) {
    pool_.parallel_for_regions(tiles, 1, task_range);
  } else {
    pool_.parallel_for(tiles * chunks, std::max<int64_t>(1, tiles / (int64_t(pool_.size()) * 4)),
                       task_range);
  }
}

}  // namespace rc::kernels
