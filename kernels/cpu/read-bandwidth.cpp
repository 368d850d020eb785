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

BandwidthProbe::BandwidthProbe(ThreadPool& pool, std::span<const ByteRegion> regions)
    : pool_(pool), sink_(size_t(pool.size()), 0) {
  // Flatten the regions into chunks so every thread gets even work.
  for (const ByteRegion& r : regions) {
    const auto* p = static_cast<const uint8_t*>(r.data);
    for (size_t off = 0; off < r.bytes; off += kChunk) {
      pieces_.push_back({p + off, std::min(kChunk, r.bytes - off)});
    }
    total_ += r.bytes;
  }
  // Every way the decode kernels read weights on this CPU (the row dots'
  // and matvec's loads, with and without software prefetch); the fastest
  // is the probe's, so decode cannot read faster than it by reading
  // differently.
  std::vector<Loop> loops{Loop::portable};
  if (best_simd_level() == SimdLevel::avx2) {
    loops = {Loop::avx2, Loop::avx2_prefetch};
    if (cpu_has_avx512_matvec()) loops.push_back(Loop::avx512_prefetch);
  }
  if (total_ == 0) return;
  read_with(loops.front());  // untimed: page faults and first touch
  double best = 0;
  for (Loop loop : loops) {
    const double gbs = double(total_) / read_with(loop);
    if (gbs > best) {
      best = gbs;
      fastest_ = loop;
    }
  }
}

double BandwidthProbe::read_once() { return read_with(fastest_); }

double BandwidthProbe::read_with(Loop loop) {
  const auto t0 = Clock::now();
  pool_.parallel_for(int64_t(pieces_.size()), 1, [&](int64_t b, int64_t e, int thread) {
    uint64_t acc = 0;
    for (int64_t i = b; i < e; ++i) {
      const Piece& pc = pieces_[size_t(i)];
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
    sink_[size_t(thread)] ^= acc;
  });
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  // Use the folds so the reads cannot be optimized away.
  volatile uint64_t keep = 0;
  for (uint64_t v : sink_) keep = keep ^ v;
  (void)keep;
  return s;
}

}  // namespace rc::kernels
