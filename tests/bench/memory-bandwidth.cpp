#include "memory-bandwidth.h"

#include <algorithm>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <chrono>
#include <thread>
#include <vector>

#include "cpu/host-memory.h"
#include "cpu/simd-level.h"

namespace rc::bench {

using namespace rc::kernels;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Sums with four independent vector accumulators so the loop is bound by
// loads, not by adder latency (AVX2 when present, else what the compiler
// makes of the portable loop).
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) float sum_range_avx2(const float* p, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
  }
  float out[8];
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}
#endif

float sum_range(const float* p, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (best_simd_level() == SimdLevel::avx2) return sum_range_avx2(p, n);
#endif
  float acc[16] = {};
  for (size_t i = 0; i + 16 <= n; i += 16) {
    for (int j = 0; j < 16; ++j) acc[j] += p[i + j];
  }
  float s = 0.0f;
  for (float a : acc) s += a;
  return s;
}

}  // namespace

double measure_read_bandwidth_gbs(int threads) {
  const size_t bytes = size_t(1) << 30, n = bytes / sizeof(float);
  auto* buf = static_cast<float*>(host_alloc(bytes));
  // Touch every page from the thread that will read it (first touch).
  std::vector<std::thread> ts;
  const size_t per = n / size_t(threads);
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([=] {
      for (size_t i = size_t(t) * per; i < size_t(t + 1) * per; ++i) buf[i] = float(i & 7);
    });
  }
  for (auto& t : ts) t.join();
  double best = 0.0;
  volatile float sink = 0.0f;
  for (int pass = 0; pass < 8; ++pass) {
    std::vector<float> partial(static_cast<size_t>(threads));
    ts.clear();
    const auto t0 = Clock::now();
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] { partial[size_t(t)] = sum_range(buf + size_t(t) * per, per); });
    }
    for (auto& t : ts) t.join();
    const double s = seconds_since(t0);
    for (float p : partial) sink = sink + p;
    best = std::max(best, double(per * size_t(threads) * sizeof(float)) / s / 1e9);
  }
  host_free(buf);
  return best;
}

}  // namespace rc::bench
