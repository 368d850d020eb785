// kernel-bench: figures for the fast CPU backend's matmul.
//
//   kernel-bench [--threads N] [--quick] [--decode-core] [--decode-attention]
//
// 0. One core's decode matmul with the row dots and with the AVX-512 matvec
//    kernels (matvec.h), from L2 and from DRAM, in thread CPU time
//    (--decode-core: only this).
// 0b. One core's decode attention (--decode-attention: only this): one
//    query of a TinyLlama-shaped layer (32 heads, 4 kv heads, head dim 64,
//    f16 KV) over 512 and 2048 keys, in microseconds of thread CPU time per
//    layer: one layer's KV again and again (in cache), and 22 layers' KV in
//    turn (11.5 and 46 MiB, as decode reads them; in decode the weights
//    streamed between two layers evict them), each with and without the
//    tasks' KV prefetch, alternated.
//
// 1. This machine's memory bandwidth: N threads each summing its share of a
//    1 GiB buffer with vector loads (best of several passes).
// 2. Decode (n = 1) matmul GB/s of weight bytes per type, at 2048x2048 and
//    5632x2048, cycling through enough copies of the weight (>= 256 MiB) that
//    every call streams from DRAM, as in a real model whose weights dwarf the
//    caches; printed with the fraction of (1).
// 3. Prefill GEMM GFLOP/s at n = 512 for the same shapes.
// 4. Per-core ceilings measured in thread CPU time, which stays meaningful
//    when the machine is shared (wall-clock figures then depend on how much
//    CPU the other processes leave): the decode dot kernels on cache-resident
//    weights (GB/s of weights one core can consume; the matmul is
//    memory-bound when threads x ceiling > bandwidth) and the prefill GEMM
//    on a 1-thread backend.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cpu/act-quant.h"
#include "cpu/cpu-attention.h"
#include "cpu/cpu-backends.h"
#include "cpu/host-memory.h"
#include "cpu/matvec.h"
#include "cpu/quant.h"
#include "cpu/row-dot.h"
#include "cpu/simd-level.h"
#include "memory-bandwidth.h"

using namespace rc::kernels;
using Clock = std::chrono::steady_clock;

namespace {

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a;
  f >> a;
  return a.empty() ? "?" : a;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Shape {
  int64_t rows, cols;
};

// A weight of the given type and shape, replicated into enough copies that
// cycling through them defeats the last-level cache.
struct WeightCopies {
  std::vector<uint8_t*> copies;
  int64_t bytes = 0;
  ~WeightCopies() {
    for (uint8_t* p : copies) host_free(p);
  }
};

void make_copies(WeightCopies& wc, DType t, Shape s, size_t min_total) {
  std::vector<float> src(static_cast<size_t>(s.cols));
  wc.bytes = row_bytes(t, s.cols) * s.rows;
  auto* first = static_cast<uint8_t*>(host_alloc(size_t(wc.bytes)));
  uint32_t state = 12345;
  for (int64_t r = 0; r < s.rows; ++r) {
    for (float& x : src) {
      state = state * 1664525u + 1013904223u;
      x = float(int(state >> 9) - (1 << 22)) / float(1 << 24);
    }
    quantize_row(t, src.data(), first + r * row_bytes(t, s.cols), s.cols);
  }
  wc.copies.push_back(first);
  while (wc.copies.size() * size_t(wc.bytes) < min_total) {
    auto* p = static_cast<uint8_t*>(host_alloc(size_t(wc.bytes)));
    std::memcpy(p, first, size_t(wc.bytes));
    wc.copies.push_back(p);
  }
}

// One core's decode matmul (n = 1, 1-thread backend, activation preparation
// included), in GB/s of weights per second of thread CPU time: with
// matvec.h's AVX-512 kernels or without (the row dots), alternated round by
// round so both see the same machine. From L2: 128 x 2048 dotted again and
// again (instruction throughput); from DRAM: 2048 x 2048 cycling through
// copies that dwarf the caches (a core's streaming rate: the stalls on
// memory count as CPU time, other processes' time does not).
void decode_core_table(const std::vector<DType>& types, bool quick, bool dram) {
  const Shape s = dram ? Shape{2048, 2048} : Shape{128, 2048};
  std::printf("decode matmul per core, n = 1, %lldx%lld from %s (thread CPU time)\n",
              (long long)s.rows, (long long)s.cols, dram ? "DRAM" : "L2");
  std::printf("%-6s %16s %16s %8s\n", "type", "row dots GB/s", "matvec GB/s", "ratio");
  auto one = make_cpu_backend(1);
  for (DType t : types) {
    WeightCopies wc;
    make_copies(wc, t, s, dram ? (size_t(quick ? 128 : 256) << 20) : 0);
    Weight w{t, wc.copies[0], s.rows, s.cols};
    std::vector<float> x(static_cast<size_t>(s.cols)), y(static_cast<size_t>(s.rows));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 23) - 11) * 0.01f;
    double best[2] = {1e30, 1e30};
    const int iters = dram ? int(wc.copies.size()) : quick ? 200 : 800;
    for (int round = 0; round < 10; ++round) {
      const bool mv = round % 2 == 1;
      set_matvec_enabled(mv);
      const double t0 = thread_cpu_seconds();
      for (int it = 0; it < iters; ++it) {
        w.data = wc.copies[size_t(it) % wc.copies.size()];
        one->matmul(w, nullptr, x.data(), y.data(), 1);
      }
      best[mv] = std::min(best[mv], (thread_cpu_seconds() - t0) / iters);
    }
    set_matvec_enabled(true);
    const bool has = matvec_fn(t) != nullptr;
    const double a = double(wc.bytes) / best[0] / 1e9, b = double(wc.bytes) / best[1] / 1e9;
    if (has) {
      std::printf("%-6s %16.1f %16.1f %7.2fx\n", dtype_name(t), a, b, b / a);
    } else {
      std::printf("%-6s %16.1f %16s %8s\n", dtype_name(t), a, "-", "-");
    }
  }
  std::printf("\n");
}

// Decode attention of one core (header, 0b): one query per call of every
// kv head's task, as the backend's decode runs them.
void decode_attention_table(bool quick) {
  constexpr int kLayers = 22, kKvHeads = 4, kGroup = 8, kHeadDim = 64, kPage = 16;
  const AttentionTaskFn task = attention_task_for(best_simd_level(), kHeadDim);
  std::printf(
      "decode attention per core, one query, %d heads over %d kv heads, head dim %d, f16 KV "
      "(us of thread CPU time per layer)\n",
      kKvHeads * kGroup, kKvHeads, kHeadDim);
  std::printf("%6s %-10s %12s %12s %8s\n", "keys", "KV of", "no prefetch", "prefetch", "ratio");
  for (int keys : {512, 2048}) {
    const int64_t row = int64_t(kKvHeads) * kHeadDim * 2, slots = keys + kPage;
    // Every layer's K then V, in one allocation as the KV pool is.
    auto* kv = static_cast<uint16_t*>(host_alloc(size_t(2 * kLayers * slots * row)));
    for (int64_t i = 0; i < 2 * kLayers * slots * row / 2; ++i) {
      kv[i] = uint16_t(0x3000 + (i * 2654435761u >> 22) % 0x0c00);  // fp16 in [0.125, 1)
    }
    std::vector<int32_t> pages(size_t(slots / kPage));
    for (size_t i = 0; i < pages.size(); ++i) pages[i] = int32_t(i);
    std::vector<float> q(size_t(kKvHeads * kGroup * kHeadDim), 0.02f), out(q.size());
    const AttentionSeq seq{pages.data(), keys - 1, 1, 0};
    AttentionArgs a;
    a.kv_type = DType::f16;
    a.kv_row_bytes = row;
    a.q = q.data();
    a.out = out.data();
    a.page_size = kPage;
    a.head_dim = kHeadDim;
    a.group = kGroup;
    a.kv_dim = kKvHeads * kHeadDim;
    a.q_dim = int64_t(kKvHeads) * kGroup * kHeadDim;
    a.scale = 0.125f;
    for (bool all_layers : {false, true}) {
      double best[2] = {1e30, 1e30};
      for (int round = 0; round < (quick ? 6 : 20); ++round) {
        const bool prefetch = round % 2 == 1;
        set_attention_prefetch_enabled(prefetch);
        const double t0 = thread_cpu_seconds();
        for (int l = 0; l < kLayers; ++l) {
          const char* base =
              reinterpret_cast<const char*>(kv) + (all_layers ? 2 * l * slots * row : 0);
          a.k = base;
          a.v = base + slots * row;
          for (int h = 0; h < kKvHeads; ++h) task(a, seq, h, 0, 1, nullptr);
        }
        best[prefetch] = std::min(best[prefetch], (thread_cpu_seconds() - t0) / kLayers);
      }
      set_attention_prefetch_enabled(true);
      std::printf("%6d %-10s %12.1f %12.1f %7.2fx\n", keys, all_layers ? "22 layers" : "one layer",
                  best[0] * 1e6, best[1] * 1e6, best[0] / best[1]);
    }
    host_free(kv);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  bool quick = false, core_only = false, attention_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--decode-core") {
      core_only = true;
    } else if (a == "--decode-attention") {
      attention_only = true;
    } else {
      std::fprintf(stderr,
                   "usage: kernel-bench [--threads N] [--quick] [--decode-core] "
                   "[--decode-attention]\n");
      return 2;
    }
  }
  auto backend = make_cpu_backend(threads);
  std::printf("backend: %s, simd %s\n", backend->name().c_str(),
              simd_level_name(best_simd_level()));
  std::printf("load average at start: %s (on %u CPUs)\n\n", load_average().c_str(),
              std::thread::hardware_concurrency());
  const std::vector<DType> types{DType::f32,  DType::f16,  DType::bf16, DType::q8_0, DType::q4_0,
                                 DType::q5_0, DType::q5_1, DType::q4_k, DType::q5_k, DType::q6_k};
  if (attention_only) {
    decode_attention_table(quick);
    return 0;
  }
  decode_core_table(types, quick, false);
  decode_core_table(types, quick, true);
  if (core_only) return 0;
  decode_attention_table(quick);
  const double bw = rc::bench::measure_read_bandwidth_gbs(threads);
  std::printf("memory bandwidth (%d threads, 1 GiB vector read): %.1f GB/s\n\n", threads, bw);

  const std::vector<Shape> shapes{{2048, 2048}, {5632, 2048}};
  const size_t min_total = quick ? (size_t(64) << 20) : (size_t(256) << 20);

  std::printf("decode matmul, n = 1 (weights streamed from DRAM)\n");
  std::printf("%-6s %-11s %10s %10s %8s\n", "type", "shape", "us/call", "GB/s", "of bw");
  for (DType t : types) {
    for (Shape s : shapes) {
      WeightCopies wc;
      make_copies(wc, t, s, min_total);
      std::vector<float> x(size_t(s.cols), 0.01f), y(static_cast<size_t>(s.rows));
      Weight w{t, nullptr, s.rows, s.cols};
      // Best of several rounds through all copies: the machine may be shared,
      // and the fastest round is the one least disturbed.
      const int calls = int(std::max<size_t>(wc.copies.size(), 20));
      double sec = 1e30;
      for (int round = 0; round < (quick ? 3 : 7); ++round) {
        const auto t0 = Clock::now();
        for (int i = 0; i < calls; ++i) {
          w.data = wc.copies[size_t(i) % wc.copies.size()];
          backend->matmul(w, nullptr, x.data(), y.data(), 1);
        }
        sec = std::min(sec, seconds_since(t0) / calls);
      }
      const double gbs = double(wc.bytes) / sec / 1e9;
      std::printf("%-6s %5lldx%-5lld %10.1f %10.1f %7.0f%%\n", dtype_name(t), (long long)s.rows,
                  (long long)s.cols, sec * 1e6, gbs, 100.0 * gbs / bw);
    }
  }

  const int n = 512;
  std::printf("\nprefill matmul, n = %d\n", n);
  std::printf("%-6s %-11s %10s %10s\n", "type", "shape", "ms/call", "GFLOP/s");
  for (DType t : types) {
    for (Shape s : shapes) {
      WeightCopies wc;
      make_copies(wc, t, s, 0);
      std::vector<float> x(static_cast<size_t>(n * s.cols)), y(size_t(n) * size_t(s.rows));
      for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 17) - 8) * 0.01f;
      const Weight w{t, wc.copies[0], s.rows, s.cols};
      backend->matmul(w, nullptr, x.data(), y.data(), n);  // warm-up
      double sec = 1e30;                                   // best of a few calls, as above
      for (int i = 0; i < (quick ? 2 : 4); ++i) {
        const auto t0 = Clock::now();
        backend->matmul(w, nullptr, x.data(), y.data(), n);
        sec = std::min(sec, seconds_since(t0));
      }
      std::printf("%-6s %5lldx%-5lld %10.2f %10.1f\n", dtype_name(t), (long long)s.rows,
                  (long long)s.cols, sec * 1e3,
                  2.0 * n * double(s.rows) * double(s.cols) / sec / 1e9);
    }
  }

  std::printf("\nper-core ceilings (thread CPU time)\n");
  std::printf("%-6s %18s %12s %18s\n", "type", "decode dot GB/s", "x threads/bw",
              "prefill GFLOP/s");
  auto one = make_cpu_backend(1);
  for (DType t : types) {
    // Decode: 64 rows x 2048 (<= 280 KB) dotted repeatedly from L2.
    const Shape s{64, 2048};
    WeightCopies wc;
    make_copies(wc, t, s, 0);
    std::vector<float> x(static_cast<size_t>(s.cols));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 23) - 11) * 0.01f;
    const ActFormat f = act_format(t);
    std::vector<uint8_t> act(static_cast<size_t>(act_row_bytes(f, s.cols)));
    quantize_act(f, x.data(), act.data(), s.cols);
    const RowDotFn dot = row_dot_fn(t, best_simd_level());
    const int64_t rb = row_bytes(t, s.cols);
    volatile float sink = 0.0f;
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
      const double t0 = thread_cpu_seconds();
      float acc = 0.0f;
      for (int it = 0; it < (quick ? 100 : 400); ++it) {
        for (int64_t r = 0; r < s.rows; ++r) acc += dot(wc.copies[0] + r * rb, act.data(), s.cols);
      }
      sink = sink + acc;
      best = std::min(best, (thread_cpu_seconds() - t0) / (quick ? 100 : 400));
    }
    const double dot_gbs = double(wc.bytes) / best / 1e9;
    // Prefill: 512 x 2048 x 2048 on one thread.
    WeightCopies big;
    make_copies(big, t, Shape{2048, 2048}, 0);
    std::vector<float> xp(static_cast<size_t>(n) * 2048), yp(static_cast<size_t>(n) * 2048);
    for (size_t i = 0; i < xp.size(); ++i) xp[i] = float(int(i % 17) - 8) * 0.01f;
    const Weight w{t, big.copies[0], 2048, 2048};
    double gemm = 1e30;
    for (int i = 0; i < 2; ++i) {
      const double t0 = thread_cpu_seconds();
      one->matmul(w, nullptr, xp.data(), yp.data(), n);
      gemm = std::min(gemm, thread_cpu_seconds() - t0);
    }
    std::printf("%-6s %18.1f %12.2f %18.1f\n", dtype_name(t), dot_gbs, threads * dot_gbs / bw,
                2.0 * n * 2048.0 * 2048.0 / gemm / 1e9);
  }
  return 0;
}
