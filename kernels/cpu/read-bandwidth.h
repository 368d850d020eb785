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
// matvec kernels run; SSE2 where AVX2 is absent), independent accumulators
// so it is bound by memory, not by adder latency, and keeps the best. A probe on a fresh 1 GiB
// buffer read lower than decode itself (F16 decode at 116% of it): small or freshly faulted
// buffers, other page sizes and one-shot thread start-up all differ from what decode reads.
#pragma once

#include <cstddef>
#include <span>

#include "thread-pool.h"

namespace rc::kernels {

struct ByteRegion {
  const void* data = nullptr;
  size_t bytes = 0;
};

// In GB/s (1e9 bytes/s): `passes` full reads of every region per load
// pattern pick the fastest pattern; that pattern then reads the regions
// again and again for at least `window_s` seconds, and the figure is the
// window's average (window_s <= 0: the best single read instead). A
// decode run's speed is its own average over seconds, while a VM's
// bandwidth swings within tens of milliseconds: the best of short reads
// catches peaks that no run of decode sustains, and a single read can land
// in a trough (decode then read above it), so model-bench probes for as
// long as the decode run it compares with lasted.
// Returns 0 when the regions hold no bytes. A first, untimed pass brings the
// pages in (an mmapped file may not be resident yet).
double measure_read_bandwidth(ThreadPool& pool, std::span<const ByteRegion> regions, int passes,
                              double window_s);

}  // namespace rc::kernels
