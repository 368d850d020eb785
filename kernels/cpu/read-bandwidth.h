// The memory read bandwidth that decode can reach on this machine: the
// roofline that model-bench compares decode speed against.
//
// Decode streams every weight once per token through the CPU backend's
// ThreadPool, each thread reading whole rows with 256-bit loads. The probe
// does the same on the same memory: it reads the given regions (the
// model's mmapped weights) through a ThreadPool of the same size, in
// chunks handed out dynamically like matmul rows, with every load pattern
// the decode kernels use on this CPU (AVX2 loads with and without the
// kernels' 16 KiB software prefetch, AVX-512 loads with it where the
// matvec kernels run; SSE2 where AVX2 is absent) and independent
// accumulators, so it is bound by memory, not by adder latency; it keeps
// the fastest pattern. A probe on a fresh 1 GiB buffer read lower than
// decode itself: small or freshly faulted
// buffers, other page sizes and one-shot thread start-up all differ from
// what decode reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "thread-pool.h"

namespace rc::kernels {

struct ByteRegion {
  const void* data = nullptr;
  size_t bytes = 0;
};

// Reads the regions (the model's mmapped weights) through `pool`, one whole
// read per call, with the load loop that reads them fastest on this CPU.
// model-bench alternates read_once() with decode steps, token by token, so
// the probe and decode see the same moments of a machine whose bandwidth
// (a VM's especially) swings by tens of percent within seconds: the best
// of short reads taken at other moments caught peaks no decode run
// sustains, or troughs that decode read above.
class BandwidthProbe {
 public:
  // Splits the regions into 256 KiB pieces; reads them once untimed (page
  // faults, first touch), then once per load loop to pick the fastest.
  BandwidthProbe(ThreadPool& pool, std::span<const ByteRegion> regions);

  size_t bytes() const { return total_; }
  // One read of every region; the seconds it took.
  double read_once();

 private:
  enum class Loop { portable, avx2, avx2_prefetch, avx512_prefetch };
  struct Piece {
    const uint8_t* p;
    size_t n;
  };
  double read_with(Loop loop);

  ThreadPool& pool_;
  std::vector<Piece> pieces_;
  size_t total_ = 0;
  Loop fastest_ = Loop::portable;
  std::vector<uint64_t> sink_;  // per thread: the folds, so no read is optimized away
};

}  // namespace rc::kernels
