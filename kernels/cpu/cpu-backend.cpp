// The fast CPU backend: wires the per-op kernels (cpu-matmul, cpu-attention)
// to the Backend interface and keeps the cheap element-wise ops here as
// plain loops the compiler vectorises, parallel over rows where the work
// is large enough to pay for waking the pool.
#include "cpu-backend.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "cpu-attention.h"
#include "cpu-backends.h"
#include "cpu-matmul.h"
#include "elementwise.h"
#include "fast-dequant.h"
#include "host-memory.h"
#include "rc-assert.h"
#include "rope-freqs.h"
#include "thread-pool.h"

namespace rc::kernels {
namespace {

// Below this many elements an element-wise op runs on the calling thread.
constexpr int64_t kParallelMinElems = 1 << 15;

class CpuBackend final : public Backend {
 public:
  CpuBackend(int n_threads, SimdLevel level)
      : n_threads_(n_threads), level_(level), pool_(n_threads), matmul_(pool_, level) {
    // sgemm is called from every pool thread at once; each call must stay
    // on its thread (OpenBLAS 0.3.x is safe for concurrent single-thread calls).
    openblas_set_num_threads(1);
  }

  std::string name() const override {
    return "cpu (" + std::to_string(n_threads_) + (n_threads_ == 1 ? " thread, " : " threads, ") +
           simd_level_name(level_) + ")";
  }

  void* alloc(size_t bytes) override { return host_alloc(bytes); }
  void free(void* p) override { host_free(p); }
  void upload(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  std::unique_ptr<KvPool> make_kv_pool(const KvPoolShape& shape) override {
    return make_host_kv_pool(shape);
  }

  // Copies in huge pages (host_alloc): F16 weights decode much faster from
  // them than from the file mapping's 4 KiB pages, Q4_K_M a little, the
  // other types within noise; copies in 4 KiB pages gained less, and less
  // steadily. Only where the kernel gives huge pages, and only when the copy
  // leaves a quarter of the available memory: a larger model keeps running
  // from the mapping, which the kernel can page.
  bool prefers_weight_copies(uint64_t bytes) const override {
    const int64_t available = host_available_bytes();
    return host_huge_pages() && available > 0 && bytes <= uint64_t(available) / 4 * 3;
  }

  void matmul(const Weight& w, const float* bias, const float* x, float* y, int n) override {
    matmul_.run(w, bias, x, y, n);
  }
  void matmuls(std::span<const MatmulOut> outs, const float* x, int n) override {
    matmul_.run_many(outs, x, n);
  }

  void get_rows(const Weight& table, const int32_t* ids, float* out, int n) override {
    const int64_t rb = row_bytes(table.type, table.cols);
    const DequantRowFn deq = dequant_row_fn(table.type, level_);
    for (int i = 0; i < n; ++i) {
      RC_ASSERT(ids[i] >= 0 && ids[i] < table.rows);
      deq(static_cast<const char*>(table.data) + ids[i] * rb, out + int64_t(i) * table.cols,
          table.cols);
    }
  }

  void rmsnorm(const float* x, const float* w, float* y, int n, int dim, float eps) override {
    const RmsNormRowFn row = rmsnorm_row_fn(level_);
    rows_parallel(n, dim, [&](int64_t i) { row(x + i * dim, w, y + i * dim, dim, eps); });
  }

  void rope(float* x, const int32_t* pos, int n, int n_heads, int head_dim,
            const RopeConfig& cfg) override {
    RC_ASSERT(cfg.n_rot <= head_dim);
    const int half = cfg.n_rot / 2;
    const RopeAngles& a = rope_angles(pos, n, cfg);
    rows_parallel(n, int64_t(n_heads) * head_dim, [&](int64_t i) {
      const float* c = a.cos.data() + i * half;
      const float* s = a.sin.data() + i * half;
      for (int h = 0; h < n_heads; ++h) {
        float* v = x + (i * n_heads + h) * head_dim;
        if (cfg.neox_halves) {
          for (int j = 0; j < half; ++j) {
            const float x0 = v[j], x1 = v[j + half];
            v[j] = x0 * c[j] - x1 * s[j];
            v[j + half] = x0 * s[j] + x1 * c[j];
          }
        } else {
          for (int j = 0; j < half; ++j) {
            const float x0 = v[2 * j], x1 = v[2 * j + 1];
            v[2 * j] = x0 * c[j] - x1 * s[j];
            v[2 * j + 1] = x0 * s[j] + x1 * c[j];
          }
        }
      }
    });
  }

  void swiglu(const float* gate, const float* up, float* out, int64_t count) override {
    const SwigluFn fn = swiglu_fn(level_);
    chunks_parallel(count, [&](int64_t b, int64_t e) { fn(gate + b, up + b, out + b, e - b); });
  }

  void add(float* y, const float* x, int64_t count) override {
    chunks_parallel(count, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] += x[i];
    });
  }

  void kv_store(KvPool& pool, int layer, const float* k, const float* v, const int32_t* slots,
                int n) override {
    host_kv_store(pool, layer, k, v, slots, n, f16_row_fn(level_));
  }

  void attention(KvPool& pool, int layer, const float* q, float* out,
                 std::span<const AttentionSeq> seqs, int n_heads, float scale) override {
    cpu_attention(pool_, level_, pool, layer, q, out, seqs, n_heads, scale);
  }

  void copy_pages(KvPool& pool, const int32_t* src, const int32_t* dst, int n) override {
    pool_.parallel_for(pool.shape().n_layers, 1, [&](int64_t l0, int64_t l1, int) {
      for (int64_t l = l0; l < l1; ++l) {
        for (int i = 0; i < n; ++i) host_kv_copy_page(pool, int(l), src[i], dst[i]);
      }
    });
  }

  int32_t argmax(const float* x, int n) override {
    int32_t best = 0;
    float bv = x[0];
    for (int i = 1; i < n; ++i) {
      if (x[i] > bv) {
        bv = x[i];
        best = i;
      }
    }
    return best;
  }

 private:
  // fn(row) for rows [0, n), in parallel when n * row_elems is large.
  template <class Fn>
  void rows_parallel(int64_t n, int64_t row_elems, const Fn& fn) {
    if (n * row_elems < kParallelMinElems) {
      for (int64_t i = 0; i < n; ++i) fn(i);
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kParallelMinElems / std::max<int64_t>(row_elems, 1));
    pool_.parallel_for(n, grain, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) fn(i);
    });
  }
  template <class Fn>
  void chunks_parallel(int64_t count, const Fn& fn) {
    if (count < 2 * kParallelMinElems) {
      fn(0, count);
      return;
    }
    pool_.parallel_for(count, kParallelMinElems, [&](int64_t b, int64_t e, int) { fn(b, e); });
  }

  // cos and sin of every (token, pair) angle, per token n_rot / 2 of each,
  // computed in double (theta reaches 1e5 rad) for the positions and config
  // of the last rope call: a forward step rotates q and k of every layer at
  // the same positions, so one computation serves all 2 * n_layers calls.
  struct RopeAngles {
    std::vector<int32_t> pos;
    RopeConfig cfg;
    std::vector<float> cos, sin;
  };
  const RopeAngles& rope_angles(const int32_t* pos, int n, const RopeConfig& cfg) {
    RopeAngles& a = rope_;
    if (a.cfg == cfg && a.pos.size() == size_t(n) && std::equal(pos, pos + n, a.pos.begin())) {
      return a;
    }
    const std::vector<double> freq = rope_freqs(cfg);
    const size_t half = size_t(cfg.n_rot / 2);
    a.pos.assign(pos, pos + n);
    a.cfg = cfg;
    a.cos.resize(size_t(n) * half);
    a.sin.resize(size_t(n) * half);
    for (size_t i = 0; i < size_t(n); ++i) {
      for (size_t j = 0; j < half; ++j) {
        const double theta = double(pos[i]) * freq[j];
        a.cos[i * half + j] = float(std::cos(theta));
        a.sin[i * half + j] = float(std::sin(theta));
      }
    }
    return a;
  }

  int n_threads_;
  SimdLevel level_;
  ThreadPool pool_;
  CpuMatmul matmul_;
  RopeAngles rope_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend_at(int n_threads, SimdLevel level) {
  RC_ASSERT(n_threads >= 1);
  RC_ASSERT(level == SimdLevel::scalar || best_simd_level() == SimdLevel::avx2);
  return std::make_unique<CpuBackend>(n_threads, level);
}

std::unique_ptr<Backend> make_cpu_backend(int n_threads) {
  if (n_threads <= 0) n_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  return make_cpu_backend_at(n_threads, best_simd_level());
}

}  // namespace rc::kernels
