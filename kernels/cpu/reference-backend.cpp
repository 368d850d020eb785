// The reference backend: plain loops, double accumulation, no threads. Every
// other backend is tested against it, so clarity beats speed here.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu-backends.h"
#include "host-memory.h"
#include "quant.h"
#include "rc-assert.h"
#include "rope-freqs.h"

namespace rc::kernels {
namespace {

class ReferenceBackend final : public Backend {
 public:
  std::string name() const override { return "cpu-reference"; }

  void* alloc(size_t bytes) override { return host_alloc(bytes); }
  void free(void* p) override { host_free(p); }
  void upload(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  std::unique_ptr<KvPool> make_kv_pool(const KvPoolShape& shape) override {
    return make_host_kv_pool(shape);
  }

  void matmul(const Weight& w, const float* bias, const float* x, float* y, int n) override {
    const int64_t K = w.cols;
    const int64_t rb = row_bytes(w.type, K);
    std::vector<float> row(static_cast<size_t>(K));
    for (int64_t r = 0; r < w.rows; ++r) {
      dequantize_row(w.type, static_cast<const char*>(w.data) + r * rb, row.data(), K);
      for (int t = 0; t < n; ++t) {
        double acc = bias ? double(bias[r]) : 0.0;
        const float* xt = x + int64_t(t) * K;
        for (int64_t k = 0; k < K; ++k) acc += double(row[size_t(k)]) * double(xt[k]);
        y[int64_t(t) * w.rows + r] = float(acc);
      }
    }
  }

  void get_rows(const Weight& table, const int32_t* ids, float* out, int n) override {
    const int64_t rb = row_bytes(table.type, table.cols);
    for (int i = 0; i < n; ++i) {
      RC_ASSERT(ids[i] >= 0 && ids[i] < table.rows);
      dequantize_row(table.type, static_cast<const char*>(table.data) + ids[i] * rb,
                     out + int64_t(i) * table.cols, table.cols);
    }
  }

  void rmsnorm(const float* x, const float* w, float* y, int n, int dim, float eps) override {
    for (int i = 0; i < n; ++i) {
      const float* xi = x + int64_t(i) * dim;
      float* yi = y + int64_t(i) * dim;
      double ss = 0.0;
      for (int k = 0; k < dim; ++k) ss += double(xi[k]) * double(xi[k]);
      const double inv = 1.0 / std::sqrt(ss / dim + double(eps));
      for (int k = 0; k < dim; ++k) yi[k] = float(double(xi[k]) * inv * double(w[k]));
    }
  }

  void rope(float* x, const int32_t* pos, int n, int n_heads, int head_dim,
            const RopeConfig& cfg) override {
    RC_ASSERT(cfg.n_rot <= head_dim);
    const std::vector<double> freq = rope_freqs(cfg);
    const int half = cfg.n_rot / 2;
    for (int i = 0; i < n; ++i) {
      for (int h = 0; h < n_heads; ++h) {
        float* v = x + (int64_t(i) * n_heads + h) * head_dim;
        for (int j = 0; j < half; ++j) {
          const double theta = double(pos[i]) * freq[size_t(j)];
          const double c = std::cos(theta), s = std::sin(theta);
          // llama rotates adjacent pairs (2j, 2j+1); neox pairs j with j + n_rot/2.
          const int a = cfg.neox_halves ? j : 2 * j;
          const int b = cfg.neox_halves ? j + half : 2 * j + 1;
          const double x0 = v[a], x1 = v[b];
          v[a] = float(x0 * c - x1 * s);
          v[b] = float(x0 * s + x1 * c);
        }
      }
    }
  }

  void swiglu(const float* gate, const float* up, float* out, int64_t count) override {
    for (int64_t i = 0; i < count; ++i) {
      const double g = gate[i];
      out[i] = float(g / (1.0 + std::exp(-g)) * double(up[i]));
    }
  }

  void add(float* y, const float* x, int64_t count) override {
    for (int64_t i = 0; i < count; ++i) y[i] += x[i];
  }

  void kv_store(KvPool& pool, int layer, const float* k, const float* v, const int32_t* slots,
                int n) override {
    host_kv_store(pool, layer, k, v, slots, n, f16_row_scalar);
  }

  void attention(KvPool& pool, int layer, const float* q, float* out,
                 std::span<const AttentionSeq> seqs, int n_heads, float scale) override {
    const KvPoolShape& s = pool.shape();
    RC_ASSERT(n_heads % s.n_kv_heads == 0);
    const int hd = s.head_dim, group = n_heads / s.n_kv_heads;
    const int64_t kv_dim = int64_t(s.n_kv_heads) * hd, q_dim = int64_t(n_heads) * hd;
    const void* K = pool.k(layer);
    const void* V = pool.v(layer);
    // One K or V row of a head, widened from the pool's type.
    std::vector<float> row_buf(static_cast<size_t>(kv_dim));
    auto head_row = [&](const void* base, int64_t slot, int64_t kv_off) {
      dequantize_row(s.type, host_kv_row(base, s, slot), row_buf.data(), kv_dim);
      return row_buf.data() + kv_off;
    };
    std::vector<double> score, acc(static_cast<size_t>(hd));
    for (const AttentionSeq& seq : seqs) {
      for (int i = 0; i < seq.n_new; ++i) {
        const int64_t row = seq.q_row + i;
        const int n_ctx = seq.n_past + i + 1;  // causal: positions 0 .. own
        for (int h = 0; h < n_heads; ++h) {
          const float* qh = q + row * q_dim + int64_t(h) * hd;
          const int64_t kv_off = int64_t(h / group) * hd;
          score.assign(size_t(n_ctx), 0.0);
          double max_score = -INFINITY;
          for (int p = 0; p < n_ctx; ++p) {
            const int64_t slot =
                int64_t(seq.page_table[p / s.page_size]) * s.page_size + p % s.page_size;
            const float* kp = head_row(K, slot, kv_off);
            double d = 0.0;
            for (int c = 0; c < hd; ++c) d += double(qh[c]) * double(kp[c]);
            score[size_t(p)] = d * double(scale);
            max_score = std::max(max_score, score[size_t(p)]);
          }
          double sum = 0.0;
          for (double& sc : score) {
            sc = std::exp(sc - max_score);
            sum += sc;
          }
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int p = 0; p < n_ctx; ++p) {
            const int64_t slot =
                int64_t(seq.page_table[p / s.page_size]) * s.page_size + p % s.page_size;
            const float* vp = head_row(V, slot, kv_off);
            for (int c = 0; c < hd; ++c) acc[size_t(c)] += score[size_t(p)] * double(vp[c]);
          }
          float* o = out + row * q_dim + int64_t(h) * hd;
          for (int c = 0; c < hd; ++c) o[c] = float(acc[size_t(c)] / sum);
        }
      }
    }
  }

  void copy_pages(KvPool& pool, const int32_t* src, const int32_t* dst, int n) override {
    for (int l = 0; l < pool.shape().n_layers; ++l) {
      for (int i = 0; i < n; ++i) host_kv_copy_page(pool, l, src[i], dst[i]);
    }
  }

  int32_t argmax(const float* x, int n) override {
    int32_t best = 0;
    for (int i = 1; i < n; ++i) {
      if (x[i] > x[best]) best = i;
    }
    return best;
  }
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace rc::kernels
