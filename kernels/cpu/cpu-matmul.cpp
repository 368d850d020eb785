#include "cpu-matmul.h"

#include <cblas.h>

#include <algorithm>

#include "fast-dequant.h"
#include "rc-assert.h"

namespace rc::kernels {

namespace {

// Decode's matmuls split their rows with ThreadPool::parallel_for_regions:
// each thread reads on through its own consecutive rows, so the kernels'
// 16 KiB software prefetch runs ahead into rows the same thread reads next.
// Handed out in sixteen ranges instead, every range started unprefetched.
// Decode speed was the same within noise, and closer to the bandwidth
// probe for most types. The grain is what a finished thread takes from another's
// region, so the threads finish within one grain of each other.
constexpr int64_t kDecodeGrainRows = 16;

}  // namespace

void dequantize_rows(const Weight& w, int64_t row0, int64_t rows, float* dst, SimdLevel level) {
  const int64_t rb = row_bytes(w.type, w.cols);
  const char* src = static_cast<const char*>(w.data) + row0 * rb;
  const DequantRowFn deq = dequant_row_fn(w.type, level);
  for (int64_t r = 0; r < rows; ++r) deq(src + r * rb, dst + r * w.cols, w.cols);
}

void CpuMatmul::run(const Weight& w, const float* bias, const float* x, float* y, int n) {
  RC_ASSERT(n >= 0 && w.rows >= 0 && w.cols % block_elems(w.type) == 0);
  if (n == 0 || w.rows == 0) return;
  // One token: the decode kernels of matvec.h (quantized: AVX-512 machines).
  if (n == 1 && level_ == SimdLevel::avx2) {
    if (const MatvecFn fn = matvec_fn(w.type)) {
      run_matvec(fn, w, bias, x, y);
      return;
    }
  }
  if (n > 1 && n <= kMatvecMaxTokens && level_ == SimdLevel::avx2) {
    if (const MatvecManyFn fn = matvec_many_fn(w.type, n)) {
      run_matvec_many(fn, w, bias, x, y, n);
      return;
    }
  }
  if (n >= kGemmMinTokens && level_ == SimdLevel::avx2 && qtile_mode() == QTileMode::best) {
    if (const LaneKernel k = lane_kernel(w.type); k.fn) {
      run_lanes(k, w, bias, x, y, n);
      return;
    }
  }
  // The tiles serve every other token count, so a (row, token) result is
  // the same bits at any n (qgemm.h); the matvec kernels above keep them.
  if (const QTileFn tile = qtile_fn(w.type, level_)) {
    run_qtiles(tile, w, bias, x, y, n);
  } else if (n >= kGemmMinTokens) {
    run_gemm(w, bias, x, y, n);
  } else {
    run_dots(w, bias, x, y, n);
  }
}

void CpuMatmul::quantize_acts(const Weight& w, const float* x, int n, bool side) {
  const int64_t K = w.cols;
  const ActFormat f = act_format(w.type);
  const int64_t ab = act_row_bytes(f, K), sb = side ? qtile_side_bytes(w.type, K) : 0;
  act_q_.resize(size_t(n * ab));
  act_side_.resize(size_t(n * sb));
  const QuantizeActFn quantize = quantize_act_fn(level_);
  auto one = [&](int64_t t) {
    quantize(f, x + t * K, act_q_.data() + t * ab, K);
    if (sb > 0) qtile_prepare_side(w.type, act_q_.data() + t * ab, K, act_side_.data() + t * sb);
  };
  if (n == 1) {
    one(0);  // decode: not worth waking the workers
  } else {
    pool_.parallel_for(n, 1, [&](int64_t t0, int64_t t1, int) {
      for (int64_t t = t0; t < t1; ++t) one(t);
    });
  }
}

void CpuMatmul::run_qtiles(QTileFn tile, const Weight& w, const float* bias, const float* x,
                           float* y, int n) {
  const int64_t K = w.cols, rows = w.rows;
  const ActFormat f = act_format(w.type);
  const int64_t ab = act_row_bytes(f, K), sb = qtile_side_bytes(w.type, K);
  // Float weights read the fp32 rows as they are.
  if (f != ActFormat::f32) quantize_acts(w, x, n, true);
  const uint8_t* act = f == ActFormat::f32 ? reinterpret_cast<const uint8_t*>(x) : act_q_.data();
  const int64_t rb = row_bytes(w.type, K);
  const int64_t groups = (rows + kQTileRows - 1) / kQTileRows;
  const int64_t chunks = (n + kTileTokens - 1) / kTileTokens;
  const int chunk_tokens = int(std::min<int64_t>(n, kTileTokens));
  scratch_.resize(size_t(pool_.size()));
  for (auto& s : scratch_) s.resize(size_t(qtile_scratch_floats(chunk_tokens) + 8));
  // Tasks run token chunk by token chunk, so the threads share one chunk's
  // activations in cache; several tasks per thread balance a preempted one.
  const int64_t tasks = groups * chunks;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  auto task_range = [&](int64_t i0, int64_t i1, int thread) {
    float* scratch = scratch_[size_t(thread)].data();
    // 32-byte alignment for the accumulators.
    scratch += (8 - (reinterpret_cast<uintptr_t>(scratch) / 4) % 8) % 8;
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t c = i / groups, g = i % groups;
      const int64_t r0 = g * kQTileRows, t0 = c * kTileTokens;
      QTileArgs a;
      a.w = wbase + r0 * rb;
      a.w_stride = rb;
      a.rows = int(std::min<int64_t>(kQTileRows, rows - r0));
      a.act = act + t0 * ab;
      a.act_stride = ab;
      a.side = act_side_.data() + t0 * sb;
      a.side_stride = sb;
      a.tokens = int(std::min<int64_t>(kTileTokens, n - t0));
      a.K = K;
      a.y = y + t0 * rows + r0;
      a.ldy = rows;
      a.bias = bias ? bias + r0 : nullptr;
      a.scratch = scratch;
      tile(a);
    }
  };
  // Decode and short steps stream each thread's own run of rows, as the
  // matvec kernels do (their prefetch runs ahead into the thread's rows).
  if (n < kGemmMinTokens) {
    pool_.parallel_for_regions(tasks, kDecodeGrainRows / kQTileRows, task_range);
  } else {
    pool_.parallel_for(tasks, std::max<int64_t>(1, groups / (int64_t(pool_.size()) * 4)),
                       task_range);
  }
}

void CpuMatmul::run_dots(const Weight& w, const float* bias, const float* x, float* y, int n) {
  const int64_t K = w.cols, rows = w.rows;
  const int64_t rb = row_bytes(w.type, K);
  const RowDotFn dot = row_dot_fn(w.type, level_);
  const ActFormat f = act_format(w.type);
  const int64_t ab = act_row_bytes(f, K);
  const uint8_t* act = reinterpret_cast<const uint8_t*>(x);
  if (f != ActFormat::f32) {
    act_q_.resize(size_t(n * ab));
    const QuantizeActFn quantize = quantize_act_fn(level_);
    for (int t = 0; t < n; ++t) quantize(f, x + t * K, act_q_.data() + t * ab, K);
    act = act_q_.data();
  }
  const char* wbase = static_cast<const char*>(w.data);
  auto row_range = [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1; ++r) {
      const void* wr = wbase + r * rb;
      const float b = bias ? bias[r] : 0.0f;
      for (int t = 0; t < n; ++t) y[t * rows + r] = dot(wr, act + t * ab, K) + b;
    }
  };
  if (n == 1) {
    pool_.parallel_for_regions(rows, kDecodeGrainRows, row_range);
  } else {
    pool_.parallel_for(rows, std::max<int64_t>(16, rows / (int64_t(pool_.size()) * 8)), row_range);
  }
}

void CpuMatmul::run_matvec(MatvecFn fn, const Weight& w, const float* bias, const float* x,
                           float* y) {
  const int64_t rows = w.rows, rb = row_bytes(w.type, w.cols);
  const MatvecAct& act = matvec_act_.prepare(w.type, x, w.cols, quantize_act_fn(level_));
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  pool_.parallel_for_regions(rows, kDecodeGrainRows, [&](int64_t r0, int64_t r1, int) {
    fn(wbase + r0 * rb, rb, r1 - r0, act, y + r0);
    if (bias) {
      for (int64_t r = r0; r < r1; ++r) y[r] += bias[r];
    }
  });
}

void CpuMatmul::run_matvec_many(MatvecManyFn fn, const Weight& w, const float* bias, const float* x,
                                float* y, int n) {
  const int64_t rows = w.rows, rb = row_bytes(w.type, w.cols);
  if (step_acts_.size() < size_t(n)) step_acts_.resize(size_t(n));
  step_views_.clear();
  for (int t = 0; t < n; ++t) {
    step_views_.push_back(
        step_acts_[size_t(t)].prepare(w.type, x + t * w.cols, w.cols, quantize_act_fn(level_)));
  }
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  pool_.parallel_for_regions(rows, kDecodeGrainRows, [&](int64_t r0, int64_t r1, int) {
    fn(wbase + r0 * rb, rb, r1 - r0, step_views_.data(), y + r0, rows);
    if (bias) {
      for (int t = 0; t < n; ++t) {
        for (int64_t r = r0; r < r1; ++r) y[t * rows + r] += bias[r];
      }
    }
  });
}

void CpuMatmul::run_many(std::span<const Backend::MatmulOut> outs, const float* x, int n) {
  const bool fused = n == 1 && level_ == SimdLevel::avx2 && outs.size() > 1 &&
                     std::all_of(outs.begin(), outs.end(), [&](const Backend::MatmulOut& o) {
                       return o.w->cols == outs[0].w->cols && matvec_fn(o.w->type) != nullptr;
                     });
  if (!fused) {
    for (const Backend::MatmulOut& o : outs) run(*o.w, o.bias, x, o.y, n);
    return;
  }
  // The activation laid out once per weight type (matvec.h: the layout
  // depends on it), and the outputs' rows as one index space.
  many_acts_.resize(outs.size());
  std::vector<ManyPart>& parts = many_parts_;
  parts.clear();
  int64_t total = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    const Weight& w = *outs[i].w;
    const MatvecAct* act = nullptr;
    for (size_t j = 0; j < i && !act; ++j) {
      if (outs[j].w->type == w.type) act = parts[j].act;
    }
    if (!act) act = &many_acts_[i].prepare(w.type, x, w.cols, quantize_act_fn(level_));
    parts.push_back({matvec_fn(w.type), act, static_cast<const uint8_t*>(w.data),
                     row_bytes(w.type, w.cols), total, w.rows, outs[i].bias, outs[i].y});
    total += w.rows;
  }
  pool_.parallel_for_regions(total, kDecodeGrainRows, [&](int64_t r0, int64_t r1, int) {
    for (const ManyPart& p : parts) {
      const int64_t b = std::max(r0, p.first_row), e = std::min(r1, p.first_row + p.rows);
      if (b >= e) continue;
      const int64_t lb = b - p.first_row, le = e - p.first_row;
      p.fn(p.w + lb * p.row_bytes, p.row_bytes, le - lb, *p.act, p.y + lb);
      if (p.bias) {
        for (int64_t r = lb; r < le; ++r) p.y[r] += p.bias[r];
      }
    }
  });
}

void CpuMatmul::run_gemm(const Weight& w, const float* bias, const float* x, float* y, int n) {
  const int64_t K = w.cols, rows = w.rows;
  const float* xa = x;
  const ActFormat f = act_format(w.type);
  if (f != ActFormat::f32) {
    // Round the activations exactly as the decode path does.
    const int64_t ab = act_row_bytes(f, K);
    act_q_.resize(size_t(n * ab));
    act_f32_.resize(size_t(n * K));
    const QuantizeActFn quantize = quantize_act_fn(level_);
    pool_.parallel_for(n, 1, [&](int64_t t0, int64_t t1, int) {
      for (int64_t t = t0; t < t1; ++t) {
        quantize(f, x + t * K, act_q_.data() + t * ab, K);
        dequantize_act(f, act_q_.data() + t * ab, act_f32_.data() + t * K, K);
      }
    });
    xa = act_f32_.data();
  }
  // 128-row tiles: OpenBLAS's single-thread sgemm runs near its peak at
  // 64-128 rows and falls off at 256; the tile also stays within L2 for
  // K <= 2048.
  const int64_t tile = std::min<int64_t>(rows, 128);
  const bool f32 = w.type == DType::f32;
  if (!f32) {
    tiles_.resize(size_t(pool_.size()));
    for (auto& t : tiles_) t.resize(size_t(tile * K));
  }
  pool_.parallel_for(rows, tile, [&](int64_t r0, int64_t r1, int thread) {
    const float* wt;
    if (f32) {
      wt = static_cast<const float*>(w.data) + r0 * K;
    } else {
      float* buf = tiles_[size_t(thread)].data();
      dequantize_rows(w, r0, r1 - r0, buf, level_);
      wt = buf;
    }
    // Column-major view: y^T[rows][n] (ld = rows) = W_tile (K x tile)^T * x^T (K x n).
    cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, int(r1 - r0), n, int(K), 1.0f, wt, int(K),
                xa, int(K), 0.0f, y + r0, int(rows));
    if (bias) {
      for (int t = 0; t < n; ++t) {
        for (int64_t r = r0; r < r1; ++r) y[t * rows + r] += bias[r];
      }
    }
  });
}

}  // namespace rc::kernels
