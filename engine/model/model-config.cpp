#include "model-config.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "recommended-sampling.h"

namespace rc::model {

namespace {

constexpr ArchTraits kArchs[] = {
    // Llama 2/3.x, TinyLlama, Mistral, SmolLM2: pairs, optional biases.
    {"llama", Arch::llama, false, false, false},
    // Qwen2 / Qwen2.5 / DeepSeek-R1 Qwen distills: halves, Q/K/V biases.
    {"qwen2", Arch::qwen2, true, true, false},
    // Qwen3: halves, no biases, per-head Q/K RMSNorm.
    {"qwen3", Arch::qwen3, true, false, true},
};

}  // namespace

const char* supported_archs_list() { return "llama, qwen2, qwen3"; }

const ArchTraits* find_arch(std::string_view name) {
  for (const ArchTraits& a : kArchs) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

namespace {

Status corrupt(std::string msg) { return Status(StatusCode::corrupt_data, std::move(msg)); }

// A positive integer hyper-parameter small enough for int arithmetic on shapes.
Status get_dim(const GgufFile& f, const std::string& key, int* out, int64_t max_value) {
  Result<int64_t> v = f.get_i64(key);
  if (!v.ok()) return v.status();
  if (*v <= 0 || *v > max_value) {
    return corrupt("metadata '" + key + "' = " + std::to_string(*v) + " is outside 1.." +
                   std::to_string(max_value));
  }
  *out = static_cast<int>(*v);
  return {};
}

// Meta's Llama 3.1 divisor of a pair's frequency (see kernels/cpu/rope-freqs).
double llama3_divisor(double wavelen, double factor, double lo, double hi, double orig) {
  if (wavelen < orig / hi) return 1.0;
  if (wavelen > orig / lo) return factor;
  const double smooth = (orig / wavelen - lo) / (hi - lo);
  return 1.0 / ((1.0 - smooth) / factor + smooth);
}

// Recovers llama3 rope-scaling parameters from rope_freqs.weight (see header).
Status fit_llama3(const GgufFile& f, const GgufTensorInfo& t, ModelConfig& c) {
  const int n = c.rope.n_rot / 2;
  if (!t.supported || t.type != kernels::DType::f32) {
    return Status(StatusCode::unsupported, "tensor 'rope_freqs.weight' must be F32");
  }
  if (t.n_elements() != n) {
    return corrupt("tensor 'rope_freqs.weight' has " + std::to_string(t.n_elements()) +
                   " values, expected n_rot/2 = " + std::to_string(n));
  }
  std::vector<double> div(n), x(n), wavelen(n);
  Result<uint32_t> orig_r = f.get_u32_or(c.arch + ".rope.scaling.original_context_length", 8192);
  if (!orig_r.ok()) return orig_r.status();
  const double orig = *orig_r > 0 ? *orig_r : 8192;
  double factor = 0;
  for (int i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, static_cast<const uint8_t*>(t.data) + 4 * i, 4);
    if (!std::isfinite(v) || v <= 0) {
      return corrupt("rope_freqs.weight[" + std::to_string(i) + "] = " + std::to_string(v) +
                     " is not a positive number");
    }
    div[i] = v;
    factor = std::max(factor, div[i]);
    const double freq = std::pow(double(c.rope.freq_base), -2.0 * i / c.rope.n_rot);
    wavelen[i] = 2.0 * std::numbers::pi / freq;
    x[i] = orig / wavelen[i];
  }
  c.has_rope_freqs = true;
  constexpr double kTol = 1e-4;
  if (factor <= 1.0 + kTol) {
    bool all_one = true;
    for (double d : div) all_one = all_one && std::fabs(d - 1.0) <= 1e-3;
    if (all_one) return {};  // divisors of 1: no scaling at all
  }
  // Interior points (1 < divisor < factor) lie on a line s = (x - lo) / (hi - lo).
  double x0 = 0, x1 = std::numeric_limits<double>::infinity();  // last "factor" x, first "1" x
  std::vector<std::pair<double, double>> mid;                   // (x, s)
  for (int i = 0; i < n; ++i) {
    if (div[i] <= 1.0 + kTol)
      x1 = std::min(x1, x[i]);
    else if (div[i] >= factor * (1.0 - kTol))
      x0 = std::max(x0, x[i]);
    else
      mid.emplace_back(x[i], (1.0 / div[i] - 1.0 / factor) / (1.0 - 1.0 / factor));
  }
  double lo = 0, hi = 0;
  if (mid.size() >= 2) {
    double sx = 0, ss = 0, sxx = 0, sxs = 0;
    for (auto [xi, si] : mid) sx += xi, ss += si, sxx += xi * xi, sxs += xi * si;
    const double m = double(mid.size());
    const double slope = (m * sxs - sx * ss) / (m * sxx - sx * sx);
    const double icpt = (ss - slope * sx) / m;
    hi = 1.0 / slope;  // hi - lo for now
    lo = -icpt * hi;
    hi += lo;
  } else if (mid.size() == 1) {
    const auto [xm, sm] = mid[0];
    lo = (x0 + xm) / 2;
    hi = lo + (xm - lo) / sm;
  } else {
    // A clean step: any band between the last scaled and first unscaled pair fits.
    if (std::isinf(x1)) x1 = x0 * 4;
    lo = x0 + (x1 - x0) / 3;
    hi = x0 + 2 * (x1 - x0) / 3;
  }
  const Status misfit(StatusCode::unsupported,
                      "tensor 'rope_freqs.weight' does not follow Llama 3.1's rope scaling; "
                      "other frequency factors are not supported");
  if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi)) return misfit;
  for (int i = 0; i < n; ++i) {
    const double p = llama3_divisor(wavelen[i], factor, lo, hi, orig);
    if (std::fabs(p - div[i]) > 1e-3 * div[i]) return misfit;
  }
  c.rope.llama3_factor = static_cast<float>(factor);
  c.rope.llama3_low_freq_factor = static_cast<float>(lo);
  c.rope.llama3_high_freq_factor = static_cast<float>(hi);
  c.rope.llama3_original_context = static_cast<int>(orig);
  return {};
}

// rope.scaling.type "llama3" without rope_freqs.weight: the parameters as metadata.
Status llama3_from_metadata(const GgufFile& f, float factor, ModelConfig& c) {
  const std::string p = c.arch + ".rope.scaling.";
  Result<float> lo = f.get_f32_or(p + "low_freq_factor", 1.0f);
  if (!lo.ok()) return lo.status();
  Result<float> hi = f.get_f32_or(p + "high_freq_factor", 4.0f);
  if (!hi.ok()) return hi.status();
  Result<uint32_t> orig = f.get_u32_or(p + "original_context_length", 8192);
  if (!orig.ok()) return orig.status();
  if (!(factor > 1.0f) || !std::isfinite(factor) || !(*lo > 0.0f) || !(*hi > *lo) ||
      !std::isfinite(*hi) || *orig == 0 || *orig > (1u << 24)) {
    return corrupt(
        "llama3 rope scaling needs factor > 1, 0 < low_freq_factor < high_freq_factor "
        "and an original_context_length (got factor " +
        std::to_string(factor) + ", low " + std::to_string(*lo) + ", high " + std::to_string(*hi) +
        ", original context " + std::to_string(*orig) + ")");
  }
  c.rope.llama3_factor = factor;
  c.rope.llama3_low_freq_factor = *lo;
  c.rope.llama3_high_freq_factor = *hi;
  c.rope.llama3_original_context = static_cast<int>(*orig);
  return {};
}

Status parse_rope(const GgufFile& f, ModelConfig& c) {
  const std::string p = c.arch + ".";
  Result<uint32_t> n_rot = f.get_u32_or(p + "rope.dimension_count", uint32_t(c.head_dim));
  if (!n_rot.ok()) return n_rot.status();
  if (static_cast<int64_t>(*n_rot) != c.head_dim) {
    return Status(StatusCode::unsupported, "partial rotary embedding (rope.dimension_count " +
                                               std::to_string(*n_rot) + " != head dim " +
                                               std::to_string(c.head_dim) + ") is not supported");
  }
  c.rope.n_rot = static_cast<int>(*n_rot);
  if (c.rope.n_rot % 2 != 0) return corrupt("rope.dimension_count must be even");
  Result<float> base = f.get_f32_or(p + "rope.freq_base", 10000.0f);
  if (!base.ok()) return base.status();
  if (!(*base > 1.0f) || !std::isfinite(*base)) {
    return corrupt("metadata '" + p + "rope.freq_base' = " + std::to_string(*base) + " is invalid");
  }
  c.rope.freq_base = *base;
  c.rope.neox_halves = find_arch(c.arch)->neox_rope;

  // Only "no scaling" and llama3 (via rope_freqs.weight) are implemented.
  Result<std::string_view> type = f.get_string_or(p + "rope.scaling.type", "none");
  if (!type.ok()) return type.status();
  Result<float> factor = f.get_f32_or(p + "rope.scaling.factor", 1.0f);
  if (!factor.ok()) return factor.status();
  Result<float> old_linear = f.get_f32_or(p + "rope.scale_linear", 1.0f);
  if (!old_linear.ok()) return old_linear.status();
  const bool trivial = *type == "none" || ((*type == "linear" || *type == "llama3") &&
                                           (*factor == 1.0f || *factor == 0.0f));
  if (!trivial && *type != "llama3") {
    return Status(StatusCode::unsupported,
                  "rope scaling '" + std::string(*type) + "' (factor " + std::to_string(*factor) +
                      ") is not supported (supported: none, llama3 via rope_freqs.weight)");
  }
  if (*old_linear != 1.0f) {
    return Status(StatusCode::unsupported, "linear rope scaling (rope.scale_linear " +
                                               std::to_string(*old_linear) + ") is not supported");
  }
  if (const GgufTensorInfo* t = f.find_tensor("rope_freqs.weight")) return fit_llama3(f, *t, c);
  if (*type == "llama3" && !trivial) return llama3_from_metadata(f, *factor, c);
  return {};
}

// head_dim from attention.key_length (checked against value_length), else
// embedding_length / head_count.
Status parse_head_dim(const GgufFile& f, ModelConfig& c) {
  const std::string p = c.arch + ".";
  const std::string kk = p + "attention.key_length", vk = p + "attention.value_length";
  if (!f.has(kk)) {
    if (c.dim % c.n_heads != 0) {
      return corrupt("embedding_length " + std::to_string(c.dim) +
                     " is not a multiple of head_count " + std::to_string(c.n_heads) + " and " +
                     kk + " is missing");
    }
    c.head_dim = c.dim / c.n_heads;
  } else if (Status s = get_dim(f, kk, &c.head_dim, 1 << 16); !s.ok()) {
    return s;
  }
  Result<uint32_t> v = f.get_u32_or(vk, uint32_t(c.head_dim));
  if (!v.ok()) return v.status();
  if (static_cast<int64_t>(*v) != c.head_dim) {
    return Status(StatusCode::unsupported, "attention.value_length " + std::to_string(*v) +
                                               " differs from key_length " +
                                               std::to_string(c.head_dim) + ": not supported");
  }
  if (c.head_dim % 2 != 0) return corrupt("head size " + std::to_string(c.head_dim) + " is odd");
  return {};
}

}  // namespace

Result<ModelConfig> parse_model_config(const GgufFile& f) {
  ModelConfig c;
  Result<std::string_view> arch = f.get_string("general.architecture");
  if (!arch.ok()) return arch.status();
  c.arch = std::string(*arch);
  const ArchTraits* traits = find_arch(c.arch);
  if (!traits) {
    return Status(StatusCode::unsupported,
                  "architecture '" + c.arch +
                      "' is not supported (supported: " + supported_archs_list() + ")");
  }
  c.arch_id = traits->id;
  c.qkv_bias = traits->qkv_bias;
  c.qk_norm = traits->qk_norm;
  Result<std::string_view> name = f.get_string_or("general.name", "");
  if (name.ok()) c.name = std::string(*name);

  const std::string p = c.arch + ".";
  constexpr int64_t kMaxDim = 1 << 20, kMaxLayers = 4096, kMaxCtx = 1 << 24;
  if (Status s = get_dim(f, p + "context_length", &c.n_ctx_train, kMaxCtx); !s.ok()) return s;
  if (Status s = get_dim(f, p + "embedding_length", &c.dim, kMaxDim); !s.ok()) return s;
  if (Status s = get_dim(f, p + "block_count", &c.n_layers, kMaxLayers); !s.ok()) return s;
  if (Status s = get_dim(f, p + "feed_forward_length", &c.ffn_dim, kMaxDim); !s.ok()) return s;
  if (Status s = get_dim(f, p + "attention.head_count", &c.n_heads, 4096); !s.ok()) return s;
  c.n_kv_heads = c.n_heads;
  if (f.has(p + "attention.head_count_kv")) {
    if (Status s = get_dim(f, p + "attention.head_count_kv", &c.n_kv_heads, 4096); !s.ok())
      return s;
  }
  if (c.n_heads % c.n_kv_heads != 0) {
    return corrupt("head_count " + std::to_string(c.n_heads) +
                   " is not a multiple of head_count_kv " + std::to_string(c.n_kv_heads));
  }
  if (Status s = parse_head_dim(f, c); !s.ok()) return s;
  Result<float> eps = f.get_f32(p + "attention.layer_norm_rms_epsilon");
  if (!eps.ok()) return eps.status();
  if (!(*eps > 0.0f) || *eps > 1.0f) return corrupt("layer_norm_rms_epsilon is not in (0, 1]");
  c.norm_eps = *eps;

  // Vocabulary size: the tokenizer's list is authoritative, as in llama.cpp.
  int64_t n_vocab = 0;
  if (const GgufArray* toks = f.find_array("tokenizer.ggml.tokens")) {
    n_vocab = static_cast<int64_t>(toks->count);
  } else if (f.has(p + "vocab_size")) {
    Result<int64_t> v = f.get_i64(p + "vocab_size");
    if (!v.ok()) return v.status();
    n_vocab = *v;
  } else if (const GgufTensorInfo* t = f.find_tensor("token_embd.weight")) {
    n_vocab = t->ne[1];
  }
  if (n_vocab <= 0 || n_vocab > (1 << 24)) {
    return corrupt("vocabulary size " + std::to_string(n_vocab) +
                   " is invalid (from tokenizer.ggml.tokens, " + p +
                   "vocab_size or token_embd.weight)");
  }
  c.n_vocab = static_cast<int>(n_vocab);

  if (Status s = parse_rope(f, c); !s.ok()) return s;
  c.sampling = read_recommended_sampling(f);
  return c;
}

std::string describe(const ModelConfig& c) {
  std::string s;
  auto line = [&s](const std::string& k, const std::string& v) { s += k + ": " + v + "\n"; };
  line("architecture", c.arch);
  if (!c.name.empty()) line("name", c.name);
  line("vocabulary", std::to_string(c.n_vocab));
  line("context (trained)", std::to_string(c.n_ctx_train));
  line("embedding", std::to_string(c.dim));
  line("layers", std::to_string(c.n_layers));
  line("heads", std::to_string(c.n_heads) + " (kv " + std::to_string(c.n_kv_heads) + ", head dim " +
                    std::to_string(c.head_dim) + ")");
  line("feed-forward", std::to_string(c.ffn_dim));
  char eps[32];
  std::snprintf(eps, sizeof eps, "%g", static_cast<double>(c.norm_eps));
  line("rms norm eps", eps);
  char base[32];
  std::snprintf(base, sizeof base, "%g", static_cast<double>(c.rope.freq_base));
  std::string rope = "n_rot " + std::to_string(c.rope.n_rot) + ", base " + base +
                     (c.rope.neox_halves ? ", halves (neox)" : ", adjacent pairs");
  if (c.rope.llama3_factor != 0.0f) {
    char l3[128];
    std::snprintf(l3, sizeof l3, ", llama3 scaling factor %g low %g high %g original context %d",
                  static_cast<double>(c.rope.llama3_factor),
                  static_cast<double>(c.rope.llama3_low_freq_factor),
                  static_cast<double>(c.rope.llama3_high_freq_factor),
                  c.rope.llama3_original_context);
    rope += l3;
  }
  line("rope", rope);
  if (c.qk_norm) line("q/k norm", "per head (attn_q_norm, attn_k_norm)");
  line("output", c.tied_output ? "tied to token_embd" : "output.weight");
  if (!c.sampling.empty()) line("sampling (recommended)", describe_sampling(c.sampling));
  return s;
}

}  // namespace rc::model
