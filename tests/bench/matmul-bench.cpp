// matmul-bench: the fast CPU backend's matmul per weight type and token
// count, each integer tile path (qgemm.h: VNNI, AVX2; the lane kernels of
// qgemm-avx512.h and qgemm-avx2-lanes.h) against the previous
// one (row dots for n < 8, dequantize + OpenBLAS sgemm above) in one run.
//
//   matmul-bench [--threads N] [--rows 2048] [--cols 2048] [--reps R]
//                [--tokens 1 16 ...] [--stream-mib 512]
//
// Figures are GOP/s (2 * rows * cols * n per call). With --threads 1 they
// are measured in thread CPU time, which stays meaningful on a machine
// shared with other processes; with more threads, in wall time (then the
// load average, printed, says how much the figures are worth).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "cpu/cpu-backend.h"
#include "cpu/qgemm.h"
#include "cpu/quant.h"
#include "cpu/simd-level.h"

using namespace rc::kernels;

namespace {

double now_seconds(bool cpu_time) {
  if (cpu_time) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

struct Mode {
  const char* name;
  QTileMode mode;
};

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, reps = 3, stream_mib = 0;
  int64_t rows = 2048, cols = 2048;
  std::vector<int> ns{1, 16, 64, 128, 512};
  CLI::App app{"matmul per type and token count: integer tiles vs the previous path",
               "matmul-bench"};
  app.add_option("--threads", threads)->capture_default_str();
  app.add_option("--rows", rows)->capture_default_str();
  app.add_option("--cols", cols)->capture_default_str();
  app.add_option("--reps", reps, "best of R timed calls")->capture_default_str();
  app.add_option("--tokens", ns, "token counts")->capture_default_str();
  app.add_option("--stream-mib", stream_mib, "cycle through this many MiB of weight copies")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (best_simd_level() != SimdLevel::avx2) {
    std::printf("no AVX2 on this CPU: nothing to compare\n");
    return 0;
  }
  const bool cpu_time = threads == 1;
  std::printf("matmul-bench: %lldx%lld, %d thread(s), %s time, VNNI %s, load average %s\n",
              static_cast<long long>(rows), static_cast<long long>(cols), threads,
              cpu_time ? "thread CPU" : "wall", cpu_has_vnni() ? "yes" : "no",
              load_average().c_str());
  std::vector<Mode> modes;
  // best: the VNNI kernels where the CPU has them, else the 256-bit lane
  // kernels (Q8_0, K-quants) and the AVX2 tiles for the other types.
  modes.push_back({cpu_has_vnni() ? "vnni" : "best", QTileMode::best});
  modes.push_back({"avx2", QTileMode::avx2});
  modes.push_back({"before", QTileMode::off});
  std::printf("%-6s %5s", "type", "n");
  for (const Mode& m : modes) std::printf(" %9s", m.name);
  std::printf("   GOP/s; ratio best/before\n");
  auto be = make_cpu_backend_at(threads, SimdLevel::avx2);
  const DType types[] = {DType::f16,  DType::bf16, DType::q8_0, DType::q4_0, DType::q5_0,
                         DType::q5_1, DType::q4_k, DType::q5_k, DType::q6_k};
  std::vector<float> src(size_t(rows * cols));
  for (size_t i = 0; i < src.size(); ++i) src[i] = float((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  for (DType t : types) {
    const size_t wb = size_t(rows * row_bytes(t, cols));
    // Enough copies of the weight that cycling through them streams from
    // DRAM (--stream-mib), as a model's weights do in decode.
    const int copies = int(std::max<size_t>(1, (size_t(stream_mib) << 20) / wb));
    std::vector<uint8_t> bytes(wb * size_t(copies));
    for (int64_t r = 0; r < rows; ++r) {
      quantize_row(t, src.data() + r * cols, bytes.data() + r * row_bytes(t, cols), cols);
    }
    for (int c = 1; c < copies; ++c) std::copy_n(bytes.data(), wb, bytes.data() + wb * size_t(c));
    int next = 0;
    auto weight = [&] {
      next = (next + 1) % copies;
      return Weight{t, bytes.data() + wb * size_t(next), rows, cols};
    };
    for (int n : ns) {
      std::vector<float> x(size_t(n * cols)), y(size_t(n * rows));
      for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 40503u) % 777) / 777.0f - 0.5f;
      std::printf("%-6s %5d", dtype_name(t), n);
      double first = 0.0, last = 0.0;
      for (const Mode& m : modes) {
        set_qtile_mode(m.mode);
        be->matmul(weight(), nullptr, x.data(), y.data(), n);  // warm-up
        double best = 1e30;
        for (int r = 0; r < reps; ++r) {
          const Weight w = weight();
          const double t0 = now_seconds(cpu_time);
          be->matmul(w, nullptr, x.data(), y.data(), n);
          best = std::min(best, now_seconds(cpu_time) - t0);
        }
        const double gops = 2.0 * double(rows) * double(cols) * n / best * 1e-9;
        std::printf(" %9.1f", gops);
        if (first == 0.0) first = gops;
        last = gops;
      }
      std::printf("   %.2fx\n", first / last);
    }
  }
  set_qtile_mode(QTileMode::best);
  return 0;
}
