// This machine's memory read bandwidth, measured the same way by every
// benchmark that reports a fraction of the roofline: `threads` threads each
// sum their share of a 1 GiB buffer with vector loads; best of 8 passes.
#pragma once

namespace rc::bench {

double measure_read_bandwidth_gbs(int threads);

}  // namespace rc::bench
