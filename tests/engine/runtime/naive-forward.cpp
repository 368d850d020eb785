#include "naive-forward.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "cpu/quant.h"

namespace rc::testing {
namespace {

using Vec = std::vector<double>;

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error("naive: " + msg); }

struct Hyper {
  std::string arch;
  int dim = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  double eps = 0, base = 10000;
  bool neox = false;  // rotate halves (qwen2, qwen3) instead of adjacent pairs (llama)
  Vec freq;           // per rotated pair
};

int64_t key(const model::GgufFile& f, const std::string& k) {
  auto v = f.get_i64(k);
  if (!v.ok()) fail(v.status().to_string());
  return *v;
}

// Meta's Llama 3.1 frequency divisor of one pair (used when the file gives
// the parameters as metadata rather than as rope_freqs.weight).
double llama3_divisor(double freq, double factor, double lo, double hi, double orig) {
  const double wavelen = 2 * std::numbers::pi / freq;
  if (wavelen < orig / hi) return 1.0;
  if (wavelen > orig / lo) return factor;
  const double smooth = (orig / wavelen - lo) / (hi - lo);
  return 1.0 / ((1 - smooth) / factor + smooth);
}

Hyper read_hyper(const model::GgufFile& f) {
  Hyper h;
  h.arch = std::string(f.get_string("general.architecture").value());
  const std::string a = h.arch + ".";
  h.dim = int(key(f, a + "embedding_length"));
  h.layers = int(key(f, a + "block_count"));
  h.heads = int(key(f, a + "attention.head_count"));
  h.kv_heads =
      f.has(a + "attention.head_count_kv") ? int(key(f, a + "attention.head_count_kv")) : h.heads;
  h.head_dim =
      f.has(a + "attention.key_length") ? int(key(f, a + "attention.key_length")) : h.dim / h.heads;
  h.ffn = int(key(f, a + "feed_forward_length"));
  h.eps = f.get_f32(a + "attention.layer_norm_rms_epsilon").value();
  h.base = f.get_f32_or(a + "rope.freq_base", 10000.0f).value();
  h.neox = h.arch == "qwen2" || h.arch == "qwen3";
  const model::GgufTensorInfo* e = f.find_tensor("token_embd.weight");
  if (!e) fail("no token_embd.weight");
  h.vocab = int(e->ne[1]);
  const int pairs = h.head_dim / 2;
  const model::GgufTensorInfo* rf = f.find_tensor("rope_freqs.weight");
  const bool l3_meta = f.get_string_or(a + "rope.scaling.type", "none").value() == "llama3";
  for (int i = 0; i < pairs; ++i) {
    double freq = std::pow(h.base, -2.0 * i / h.head_dim);
    if (rf) {
      freq /= static_cast<const float*>(rf->data)[i];
    } else if (l3_meta) {
      const std::string s = a + "rope.scaling.";
      freq /= llama3_divisor(freq, f.get_f32(s + "factor").value(),
                             f.get_f32_or(s + "low_freq_factor", 1).value(),
                             f.get_f32_or(s + "high_freq_factor", 4).value(),
                             f.get_u32_or(s + "original_context_length", 8192).value());
    }
    h.freq.push_back(freq);
  }
  return h;
}

const model::GgufTensorInfo& tensor(const model::GgufFile& f, const std::string& name) {
  const model::GgufTensorInfo* t = f.find_tensor(name);
  if (!t) fail("missing " + name);
  return *t;
}

// Row r of a [rows][cols] tensor as doubles, through the reference decoder.
Vec row(const model::GgufTensorInfo& t, int64_t r) {
  const int64_t cols = t.ne[0];
  std::vector<float> tmp(static_cast<size_t>(cols));
  const auto* base = static_cast<const uint8_t*>(t.data);
  kernels::dequantize_row(t.type, base + r * kernels::row_bytes(t.type, cols), tmp.data(), cols);
  return Vec(tmp.begin(), tmp.end());
}

// y = W x (+ bias), W [rows][cols].
Vec matvec(const model::GgufTensorInfo& w, const Vec& x, const model::GgufTensorInfo* bias) {
  if (w.ne[0] != int64_t(x.size())) fail(std::string(w.name) + ": width mismatch");
  Vec y(static_cast<size_t>(w.ne[1]));
  const Vec b = bias ? row(*bias, 0) : Vec(y.size(), 0.0);
  for (int64_t r = 0; r < w.ne[1]; ++r) {
    const Vec wr = row(w, r);
    double s = 0;
    for (size_t c = 0; c < x.size(); ++c) s += wr[c] * x[c];
    y[size_t(r)] = s + b[size_t(r)];
  }
  return y;
}

// RMSNorm of x[off .. off + n) in place, times weight w[n].
void rmsnorm(Vec& x, size_t off, size_t n, const Vec& w, double eps) {
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += x[off + i] * x[off + i];
  const double inv = 1.0 / std::sqrt(ss / double(n) + eps);
  for (size_t i = 0; i < n; ++i) x[off + i] = x[off + i] * inv * w[i];
}

void rope(Vec& x, int n_heads, const Hyper& h, int pos) {
  const int half = h.head_dim / 2;
  for (int hd = 0; hd < n_heads; ++hd) {
    double* v = x.data() + size_t(hd) * h.head_dim;
    for (int i = 0; i < half; ++i) {
      const double th = pos * h.freq[size_t(i)];
      const int a = h.neox ? i : 2 * i, b = h.neox ? i + half : 2 * i + 1;
      const double x0 = v[a], x1 = v[b];
      v[a] = x0 * std::cos(th) - x1 * std::sin(th);
      v[b] = x0 * std::sin(th) + x1 * std::cos(th);
    }
  }
}

}  // namespace

std::vector<float> naive_last_logits(const model::GgufFile& f, const std::vector<int32_t>& tokens) {
  const Hyper h = read_hyper(f);
  const size_t n = tokens.size(), hd = size_t(h.head_dim);
  if (n == 0) fail("no tokens");
  const model::GgufTensorInfo& embd = tensor(f, "token_embd.weight");
  std::vector<Vec> x(n);
  for (size_t t = 0; t < n; ++t) x[t] = row(embd, tokens[t]);

  for (int l = 0; l < h.layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    auto T = [&](const char* name) -> const model::GgufTensorInfo& { return tensor(f, b + name); };
    auto opt = [&](const char* name) { return f.find_tensor(b + name); };
    const Vec attn_norm = row(T("attn_norm.weight"), 0), ffn_norm = row(T("ffn_norm.weight"), 0);
    const model::GgufTensorInfo* qn = opt("attn_q_norm.weight");
    const model::GgufTensorInfo* kn = opt("attn_k_norm.weight");
    std::vector<Vec> q(n), k(n), v(n);
    for (size_t t = 0; t < n; ++t) {
      Vec hn = x[t];
      rmsnorm(hn, 0, hn.size(), attn_norm, h.eps);
      q[t] = matvec(T("attn_q.weight"), hn, opt("attn_q.bias"));
      k[t] = matvec(T("attn_k.weight"), hn, opt("attn_k.bias"));
      v[t] = matvec(T("attn_v.weight"), hn, opt("attn_v.bias"));
      if (qn && kn) {  // qwen3: every head normalised on its own
        const Vec qw = row(*qn, 0), kw = row(*kn, 0);
        for (int i = 0; i < h.heads; ++i) rmsnorm(q[t], size_t(i) * hd, hd, qw, h.eps);
        for (int i = 0; i < h.kv_heads; ++i) rmsnorm(k[t], size_t(i) * hd, hd, kw, h.eps);
      }
      rope(q[t], h.heads, h, int(t));
      rope(k[t], h.kv_heads, h, int(t));
    }
    const int group = h.heads / h.kv_heads;
    const double scale = 1.0 / std::sqrt(double(h.head_dim));
    for (size_t t = 0; t < n; ++t) {
      Vec att(size_t(h.heads) * hd, 0.0);
      for (int i = 0; i < h.heads; ++i) {
        const size_t qo = size_t(i) * hd, ko = size_t(i / group) * hd;
        Vec s(t + 1);
        double mx = -1e300;
        for (size_t u = 0; u <= t; ++u) {
          double d = 0;
          for (size_t c = 0; c < hd; ++c) d += q[t][qo + c] * k[u][ko + c];
          s[u] = d * scale;
          mx = std::max(mx, s[u]);
        }
        double z = 0;
        for (double& e : s) z += (e = std::exp(e - mx));
        for (size_t u = 0; u <= t; ++u) {
          for (size_t c = 0; c < hd; ++c) att[qo + c] += s[u] / z * v[u][ko + c];
        }
      }
      const Vec o = matvec(T("attn_output.weight"), att, nullptr);
      for (size_t c = 0; c < o.size(); ++c) x[t][c] += o[c];
      Vec hn = x[t];
      rmsnorm(hn, 0, hn.size(), ffn_norm, h.eps);
      Vec g = matvec(T("ffn_gate.weight"), hn, nullptr);
      const Vec up = matvec(T("ffn_up.weight"), hn, nullptr);
      for (size_t c = 0; c < g.size(); ++c) g[c] = g[c] / (1.0 + std::exp(-g[c])) * up[c];
      const Vec dn = matvec(T("ffn_down.weight"), g, nullptr);
      for (size_t c = 0; c < dn.size(); ++c) x[t][c] += dn[c];
    }
  }
  Vec last = x[n - 1];
  rmsnorm(last, 0, last.size(), row(tensor(f, "output_norm.weight"), 0), h.eps);
  const model::GgufTensorInfo* out = f.find_tensor("output.weight");
  const Vec logits = matvec(out ? *out : embd, last, nullptr);
  return std::vector<float>(logits.begin(), logits.end());
}

}  // namespace rc::testing
