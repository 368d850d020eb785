// The copy model: an induction-head circuit written into llama weights.
//
// Residual stream (dim D, head dim 64, C = 64 * chunks code dims):
//   E  [0, C)            the token's code: C random +-1 values
//   P1..P8 [C, 9C)       after layer 0: the codes of the 1st..8th previous token
//   O  [9C, 10C)         the copied token's code, a vote from every later layer
//   U  [10C, 10C + 32)   a fixed +-1 pattern every token carries (a constant
//                        direction for position-only queries and keys)
// and zeros elsewhere. chunks = how many 64-wide code chunks fit, at most
// the KV head count (one KV head moves one chunk): 3 at TinyLlama's 2048.
//
// Layer 0 (previous-token heads): query head j-1 of KV group g attends to
// the position j back and copies code chunk g (its value) into Pj. Scores
// use only U, on the rotary pairs with frequencies 1, 0.13, 0.017, 0.0022
// (rope.freq_base = 0.13^-32): the key is the same for every position and
// the query's phase is shifted by j, so the score is a sum of
// cos(theta_i * (distance - j)), highest at distance j by 30 logits or more
// everywhere in a 2k context.
//
// Layers 1..L-1 (induction heads): on the 28 slowest pairs (rotating less
// than half a radian over 1.5k tokens) the first query head of every KV
// group compares x_t..x_t-7 with position s's x_s-1..x_s-8, 7 code
// coordinates per token, a different random choice per layer and head; the
// pair of frequency 0.0022 adds a small recency term, so among equal
// matches the latest wins. The value is E at s (x_s, the token that
// followed the match), written into O. Each agreeing token adds ~50 logits
// (a disagreeing one 0 +- 19), so the source whose last 8 tokens all agree
// wins, a repeated word inside the document does not derail the copy, and a
// copy also starts where most of them agree: "<|end|>\n<|assistant|>\n"
// matches "<|end|>\n<|user|>\n" in 7 of 8, so the reply repeats the user's
// message. Every layer and KV head votes, each with its own coordinate
// choice, so one head's pick from a code collision is outvoted.
//
// output.weight reads O: logit(v) = <code(v), O>. The RMSNorm weights undo
// the norm for the stream's known size, so the scales above hold. Feed-
// forward weights and the unused heads' rows are zero: every matmul is done
// at full size, at the random model's cost. All nonzero values are +-1 or a
// few distinct magnitudes per row, which the 4- and 6-bit block formats keep
// almost exactly.
#include "copy-gguf.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "cpu/quant.h"
#include "splitmix.h"

namespace rc::testing {

using kernels::DType;
using model::GgufWriter;

namespace {

constexpr int kHd = 64;          // head dim the circuit is laid out for
constexpr int kSlots = 8;        // tokens of context an induction head matches
constexpr int kConstDims = 32;   // U
constexpr double kRho = 0.13;    // ratio of successive rotary frequencies
constexpr int kRecencyPair = 3;  // frequency kRho^3
constexpr int kContentPair = 4;  // first pair the induction heads match on
constexpr int kSlotDims = (kHd - 2 * kContentPair) / kSlots;
// Layer 0: the score (logits) at the wanted distance; the pair weights give
// the largest worst-case gap to any other distance (0.094 of the peak).
constexpr double kPosPeak = 320;
constexpr double kPosWeights[] = {1, 1, 1, 0.5};  // pairs 0..3
constexpr double kSlotLogits = 50;                // induction: per agreeing token
// Recency: 20 * cos(0.0022 * distance + 0.15) falls all the way to distance
// 1360, and is small next to one agreeing token.
constexpr double kRecencyLogits = 20, kRecencyPhase = 0.15;
constexpr double kVoteTotal = 0.5;  // |O| / |E| when every vote agrees
constexpr double kOutLogits = 40;   // the copied token's logit

using Rng = SplitMix64;

std::vector<float> signs(uint64_t stream, int64_t n) {
  Rng r{stream};
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t bits = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i % 64 == 0) bits = r.next();
    v[size_t(i)] = (bits >> (i % 64)) & 1 ? 1.0f : -1.0f;
  }
  return v;
}

std::vector<int> permutation(uint64_t stream) {
  std::vector<int> p(kHd);
  for (int i = 0; i < kHd; ++i) p[size_t(i)] = i;
  Rng r{stream};
  for (int i = kHd - 1; i > 0; --i) std::swap(p[size_t(i)], p[r.next() % uint64_t(i + 1)]);
  return p;
}

struct Layout {
  int64_t dim, chunks, code;  // code = 64 * chunks
  int heads, kv, group, layers;
  int64_t e(int64_t chunk) const { return chunk * kHd; }
  int64_t p(int j, int64_t chunk) const { return code * j + chunk * kHd; }  // j = 1..kSlots
  int64_t o(int64_t chunk) const { return code * (kSlots + 1) + chunk * kHd; }
  int64_t u() const { return code * (kSlots + 2); }
};

Layout layout_of(const RandomModelSpec& s) {
  Layout l;
  l.dim = s.dim;
  l.heads = s.heads, l.kv = s.kv_heads, l.group = s.heads / s.kv_heads, l.layers = s.layers;
  l.chunks = std::min<int64_t>(s.kv_heads, (s.dim - kConstDims) / (kHd * (kSlots + 2)));
  l.code = l.chunks * kHd;
  return l;
}

double theta(int pair) {
  return std::pow(double(copy_rope_base()), -2.0 * pair / kHd);  // as the engine's rope
}

// Fills row r of a [rows][cols] tensor (zeroed first); null: all zeros.
using RowFn = std::function<void(int64_t r, float* row)>;

void add_rows(GgufWriter& w, const std::string& name, DType type, int64_t cols, int64_t rows,
              RowFn fn) {
  std::vector<int64_t> ne = {cols};
  if (rows > 1) ne.push_back(rows);
  w.add_tensor_fill(name, type, ne, [=](uint8_t* dst, size_t n_bytes) {
    const size_t rb = n_bytes / static_cast<size_t>(rows);
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      if (!fn && r > 0) {  // zeros: the first row's blocks again
        std::memcpy(dst + r * rb, dst, rb);
        continue;
      }
      std::fill(row.begin(), row.end(), 0.0f);
      if (fn) fn(r, row.data());
      kernels::quantize_row(type, row.data(), dst + r * rb, cols);
    }
  });
}

// value * U: a query or key component that is the same at every position.
void put_const(const Layout& l, const std::vector<float>& u, double value, float* row) {
  for (int i = 0; i < kConstDims; ++i) {
    row[l.u() + i] = static_cast<float>(value / kConstDims) * u[size_t(i)];
  }
}

// The residual's squared norm entering layer `layer` (layer L: the output norm),
// with sharp previous-token heads and agreeing votes.
double stream_norm2(const Layout& l, int layer) {
  if (layer == 0) return double(l.code + kConstDims);
  const double votes = kVoteTotal * (layer - 1) / (l.layers - 1);
  return double(l.code) * (1 + kSlots + votes * votes) + kConstDims;
}

void add_layer0(const Layout& l, const std::vector<float>& u, GgufWriter& w, const std::string& b,
                DType tq, DType tk, DType tv, DType to) {
  double wsum = 0;
  for (double x : kPosWeights) wsum += x;
  // q_i * k_i = 8 * peak * w_i / sum(w): the attention scale is 1/8.
  auto amp = [wsum](int pair) {
    return std::sqrt(std::sqrt(double(kHd)) * kPosPeak * kPosWeights[pair] / wsum);
  };
  const int n_pairs = static_cast<int>(std::size(kPosWeights));
  add_rows(w, b + "attn_q.weight", tq, l.dim, int64_t(l.heads) * kHd, [=](int64_t r, float* row) {
    const int h = int(r / kHd), d = int(r % kHd), g = h / l.group, j = h % l.group + 1;
    if (g >= l.chunks || j > kSlots || d / 2 >= n_pairs) return;
    const double a = amp(d / 2), ph = theta(d / 2) * j;  // peak at distance j
    put_const(l, u, d % 2 == 0 ? a * std::cos(ph) : -a * std::sin(ph), row);
  });
  add_rows(w, b + "attn_k.weight", tk, l.dim, int64_t(l.kv) * kHd, [=](int64_t r, float* row) {
    const int g = int(r / kHd), d = int(r % kHd);
    if (g < l.chunks && d % 2 == 0 && d / 2 < n_pairs) put_const(l, u, amp(d / 2), row);
  });
  add_rows(w, b + "attn_v.weight", tv, l.dim, int64_t(l.kv) * kHd, [=](int64_t r, float* row) {
    const int64_t g = r / kHd;
    if (g < l.chunks) row[l.e(g) + r % kHd] = 1.0f;
  });
  add_rows(w, b + "attn_output.weight", to, int64_t(l.heads) * kHd, l.dim,
           [=](int64_t r, float* row) {
             if (r < l.code || r >= l.code * (kSlots + 1)) return;
             const int j = int(r / l.code);
             const int64_t g = (r % l.code) / kHd, d = r % kHd;
             row[(g * l.group + j - 1) * kHd + d] = 1.0f;
           });
}

void add_induction_layer(const RandomModelSpec& s, const Layout& l, int layer,
                         const std::vector<float>& u, GgufWriter& w, const std::string& b, DType tq,
                         DType tk, DType tv, DType to) {
  // perm[kv][slot]: which code coordinates slot `slot` of KV head kv compares.
  std::vector<std::vector<std::vector<int>>> perm(size_t(l.kv));
  for (int kv = 0; kv < l.kv; ++kv) {
    for (int j = 0; j < kSlots; ++j) {
      perm[size_t(kv)].push_back(
          permutation(name_hash(s.seed, "copy.slot." + std::to_string(layer) + "." +
                                            std::to_string(kv) + "." + std::to_string(j))));
    }
  }
  const double alpha = std::sqrt(std::sqrt(double(kHd)) * kSlotLogits / kSlotDims);
  const double rec = std::sqrt(std::sqrt(double(kHd)) * kRecencyLogits);
  // Content dim d (>= 2 * kContentPair) of KV head kv: (slot, code coordinate).
  auto slot_of = [=](int64_t kv, int d) {
    const int m = d - 2 * kContentPair, j = m / kSlotDims;
    return std::pair<int, int>(
        j, j < kSlots ? perm[size_t(kv)][size_t(j)][size_t(m % kSlotDims)] : -1);
  };
  add_rows(w, b + "attn_q.weight", tq, l.dim, int64_t(l.heads) * kHd, [=](int64_t r, float* row) {
    const int64_t h = r / kHd, kv = h / l.group, g = kv % l.chunks;
    const int d = int(r % kHd);
    if (h % l.group != 0) return;  // one query head per KV group
    if (d / 2 == kRecencyPair) {
      const double v = d % 2 == 0 ? std::cos(kRecencyPhase) : std::sin(kRecencyPhase);
      put_const(l, u, rec * v, row);
    } else if (d >= 2 * kContentPair) {
      const auto [j, c] = slot_of(kv, d);
      if (j < kSlots) row[(j == 0 ? l.e(g) : l.p(j, g)) + c] = static_cast<float>(alpha);
    }
  });
  add_rows(w, b + "attn_k.weight", tk, l.dim, int64_t(l.kv) * kHd, [=](int64_t r, float* row) {
    const int64_t kv = r / kHd, g = kv % l.chunks;
    const int d = int(r % kHd);
    if (d == 2 * kRecencyPair) {
      put_const(l, u, rec, row);
    } else if (d >= 2 * kContentPair) {
      const auto [j, c] = slot_of(kv, d);
      if (j < kSlots) row[l.p(j + 1, g) + c] = static_cast<float>(alpha);
    }
  });
  add_rows(w, b + "attn_v.weight", tv, l.dim, int64_t(l.kv) * kHd,
           [=](int64_t r, float* row) { row[l.e((r / kHd) % l.chunks) + r % kHd] = 1.0f; });
  add_rows(w, b + "attn_output.weight", to, int64_t(l.heads) * kHd, l.dim,
           [=](int64_t r, float* row) {
             if (r < l.o(0) || r >= l.o(l.chunks)) return;
             const int64_t g = (r - l.o(0)) / kHd, d = r % kHd;
             int voters = 0;  // KV heads voting into chunk g, per layer
             for (int kv = 0; kv < l.kv; ++kv) voters += kv % l.chunks == g;
             const double beta = kVoteTotal / (double(voters) * (l.layers - 1));
             for (int kv = 0; kv < l.kv; ++kv) {
               if (kv % l.chunks == g) row[int64_t(kv) * l.group * kHd + d] = float(beta);
             }
           });
}

}  // namespace

float copy_rope_base() { return static_cast<float>(std::pow(kRho, -kHd / 2.0)); }

Status check_copy_spec(const RandomModelSpec& s) {
  const int head_dim = s.head_dim > 0 ? s.head_dim : s.dim / s.heads;
  if (s.arch != "llama" || head_dim != kHd || s.heads / s.kv_heads < kSlots || s.layers < 2 ||
      s.dim < kHd * (kSlots + 2) + kConstDims || s.llama3_rope || s.llama3_rope_metadata ||
      s.tied_output) {
    return Status(StatusCode::invalid_argument,
                  "--copy needs --arch llama, head dim 64, at least 8 heads per KV head, 2 "
                  "layers and --dim 672, no --tied and no llama3 rope");
  }
  return {};
}

void add_copy_tensors(const RandomModelSpec& s, int64_t n_vocab, GgufWriter& w) {
  const Layout l = layout_of(s);
  const std::vector<float> u = signs(name_hash(s.seed, "copy.const"), kConstDims);
  const uint64_t code_key = name_hash(s.seed, "copy.code");
  auto code = [code_key, l](int64_t token) {
    return signs(code_key ^ (uint64_t(token) * 0xd1342543de82ef95ull), l.code);
  };
  auto wt = [&](const std::string& name, int layer, int64_t cols) {
    return weight_type_for(s.type, name, layer, s.layers, cols);
  };
  auto norm = [&](const std::string& name, double norm2) {
    const float g = static_cast<float>(std::sqrt(norm2 / double(l.dim)));
    const int64_t dim = l.dim;
    add_rows(w, name, DType::f32, dim, 1,
             [g, dim](int64_t, float* row) { std::fill(row, row + dim, g); });
  };
  add_rows(w, "token_embd.weight", wt("token_embd.weight", 0, l.dim), l.dim, n_vocab,
           [=](int64_t v, float* row) {
             const std::vector<float> c = code(v);
             std::copy(c.begin(), c.end(), row + l.e(0));
             std::copy(u.begin(), u.end(), row + l.u());
           });
  norm("output_norm.weight", stream_norm2(l, l.layers));
  const double gamma = kOutLogits / (kVoteTotal * double(l.code));
  add_rows(w, "output.weight", wt("output.weight", 0, l.dim), l.dim, n_vocab,
           [=](int64_t v, float* row) {
             const std::vector<float> c = code(v);
             for (int64_t i = 0; i < l.code; ++i) row[l.o(0) + i] = float(gamma) * c[size_t(i)];
           });
  const int64_t q = int64_t(s.heads) * kHd;
  for (int layer = 0; layer < s.layers; ++layer) {
    const std::string b = "blk." + std::to_string(layer) + ".";
    norm(b + "attn_norm.weight", stream_norm2(l, layer));
    const DType tq = wt(b + "attn_q.weight", layer, l.dim),
                tk = wt(b + "attn_k.weight", layer, l.dim);
    const DType tv = wt(b + "attn_v.weight", layer, l.dim);
    const DType to = wt(b + "attn_output.weight", layer, q);
    if (layer == 0) {
      add_layer0(l, u, w, b, tq, tk, tv, to);
    } else {
      add_induction_layer(s, l, layer, u, w, b, tq, tk, tv, to);
    }
    norm(b + "ffn_norm.weight", double(l.dim));  // weight 1: the FFN's input is unused
    add_rows(w, b + "ffn_gate.weight", wt(b + "ffn_gate.weight", layer, l.dim), l.dim, s.ffn, {});
    add_rows(w, b + "ffn_up.weight", wt(b + "ffn_up.weight", layer, l.dim), l.dim, s.ffn, {});
    add_rows(w, b + "ffn_down.weight", wt(b + "ffn_down.weight", layer, s.ffn), s.ffn, l.dim, {});
  }
}

}  // namespace rc::testing
