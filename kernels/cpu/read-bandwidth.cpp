#include "read-bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "matvec.h"
#include "simd-level.h"

namespace rc::kernels {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunk = size_t(1) << 18;  // 256 KiB per handed-out range

// Portable fallback: eight 64-bit lanes, XOR-folded so the compiler keeps
// the loads (SSE2 on every x86-64).
uint64_t fold_portable(const uint8_t* p, size_t n) {
  uint64_t a[8] = {};
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int j = 0; j < 8; ++j) {
      uint64_t v;
      std::memcpy(&v, p + i + 8 * j, 8);
      a[j] ^= v;
    }
  }
  for (; i < n; ++i) a[0] ^= p[i];
  return a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6] ^ a[7];
}

}  // namespace

uint64_t fold_avx2(const uint8_t* p, size_t n, bool prefetch);  // read-bandwidth-avx2.cpp
uint64_t fold_avx512(const uint8_t* p, size_t n);               // read-bandwidth-avx512.cpp

double measure_read_bandwidth(ThreadPool& pool, std::span<const ByteRegion> regions, int passes,
                              double window_s) {
  // Flatten the regions into chunks so every thread gets even work.
  struct Piece {
    const uint8_t* p;
    size_t n;
  };
  std::vector<Piece> pieces;
  size_t total = 0;
  for (const ByteRegion& r : regions) {
    const auto* p = static_cast<const uint8_t*>(r.data);
    for (size_t off = 0; off < r.bytes; off += kChunk) {
      pieces.push_back({p + off, std::min(kChunk, r.bytes - off)});
    }
    total += r.bytes;
  }
  if (total == 0) return 0.0;
  // Every way the decode kernels read weights on this CPU (the row dots'
  // and matvec's loads, with and without software prefetch); the best of
  // all is the figure, so decode cannot read faster than the probe by
  // reading differently.
  enum class Loop { portable, avx2, avx2_prefetch, avx512_prefetch };
  std::vector<Loop> loops{Loop::portable};
  if (best_simd_level() == SimdLevel::avx2) {
    loops = {Loop::avx2, Loop::avx2_prefetch};
    if (cpu_has_avx512_matvec()) loops.push_back(Loop::avx512_prefetch);
  }
  std::vector<uint64_t> sink(size_t(pool.size()), 0);
  auto read_all = [&](Loop loop) {
    pool.parallel_for(int64_t(pieces.size()), 1, [&](int64_t b, int64_t e, int thread) {
      uint64_t acc = 0;
      for (int64_t i = b; i < e; ++i) {
        const Piece& pc = pieces[size_t(i)];
        switch (loop) {
          case Loop::portable:
            acc ^= fold_portable(pc.p, pc.n);
            break;
          case Loop::avx2:
          case Loop::avx2_prefetch:
            acc ^= fold_avx2(pc.p, pc.n, loop == Loop::avx2_prefetch);
            break;
          case Loop::avx512_prefetch:
            acc ^= fold_avx512(pc.p, pc.n);
            break;
        }
      }
      sink[size_t(thread)] ^= acc;
    });
  };
  read_all(loops.front());  // untimed: page faults and first touch
  double best = 0.0;
  Loop fastest = loops.front();
  for (int pass = 0; pass < std::max(passes, 1); ++pass) {
    for (Loop loop : loops) {
      const auto t0 = Clock::now();
      read_all(loop);
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (double(total) / s / 1e9 > best) {
        best = double(total) / s / 1e9;
        fastest = loop;
      }
    }
  }
  if (window_s > 0) {
    const auto t0 = Clock::now();
    double bytes = 0, s = 0;
    do {
      read_all(fastest);
      bytes += double(total);
      s = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (s < window_s);
    best = bytes / s / 1e9;
  }
  // Use the folds so the reads cannot be optimized away.
  volatile uint64_t keep = 0;
  for (uint64_t v : sink) keep = keep ^ v;
  (void)keep;
  return best;
}

}  // namespace rc::kernels
