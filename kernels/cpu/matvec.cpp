#include "matvec.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "qgemm.h"
#include "rc-assert.h"

namespace rc::kernels {

namespace {

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> on{[] {
    const char* env = std::getenv("RADIXCHAT_CPU_MATVEC");
    return !(env && std::strcmp(env, "0") == 0);
  }()};
  return on;
}

// Sub-block order of a Q4_K / Q5_K activation block (its own inverse).
constexpr int kNibbleOrder[8] = {0, 2, 1, 3, 4, 6, 5, 7};

// Resizes v so that n elements fit from a 64-byte boundary inside it, and
// returns that boundary (MatvecAct's arrays are cache-line aligned).
template <class T>
T* cache_aligned(std::vector<T>& v, size_t n) {
  constexpr size_t kLine = 64;
  v.resize(n + kLine / sizeof(T));
  const auto addr = reinterpret_cast<uintptr_t>(v.data());
  return v.data() + ((kLine - addr % kLine) % kLine) / sizeof(T);
}

bool permuted(DType t) { return t == DType::q4_k || t == DType::q5_k; }

// The offset c of the weight quants as the kernels read them (matvec.h).
int32_t quant_offset(DType t) {
  switch (t) {
    case DType::q8_0:
      return 128;
    case DType::q4_0:
      return 8;
    case DType::q5_0:
      return 16;
    case DType::q6_k:
      return 32;
    default:
      return 0;
  }
}

}  // namespace

const MatvecAct& MatvecActBuffer::prepare(DType t, const float* x, int64_t K,
                                          QuantizeActFn quantize) {
  act_ = MatvecAct{};
  act_.K = K;
  const ActFormat f = act_format(t);
  if (f == ActFormat::f32) {
    act_.x = x;
    return act_;
  }
  raw_.resize(size_t(act_row_bytes(f, K)));
  quantize(f, x, raw_.data(), K);
  int8_t* qs = cache_aligned(qs_, size_t(K) + 64);
  int32_t* ns4 = cache_aligned(ns4_, size_t(K / 4) + 16);
  if (f == ActFormat::q8_32) {
    const int64_t nb = K / 32;
    float* d = cache_aligned(d_, size_t(nb) + 16);
    float* ms = cache_aligned(ms_, size_t(nb) + 16);
    const auto* a = reinterpret_cast<const BlockQ8A*>(raw_.data());
    for (int64_t b = 0; b < nb; ++b) {
      std::memcpy(qs + 32 * b, a[b].qs, 32);
      d[b] = a[b].d;
      ms[b] = a[b].d * float(a[b].sum[0] + a[b].sum[1]);
    }
    act_.d = d;
    act_.ms = ms;
  } else {
    const int64_t nb = K / 256;
    float* d = cache_aligned(d_, size_t(nb) + 16);
    int16_t* bsum = cache_aligned(bsum_, size_t(nb) * 8);
    const auto* a = reinterpret_cast<const BlockQ8K*>(raw_.data());
    for (int64_t b = 0; b < nb; ++b) {
      for (int c = 0; c < 8; ++c) {
        const int src = permuted(t) ? kNibbleOrder[c] : c;
        std::memcpy(qs + 256 * b + 32 * c, a[b].qs + 32 * src, 32);
      }
      d[b] = a[b].d;
      std::memcpy(bsum + 8 * b, a[b].bsum, sizeof(a[b].bsum));
    }
    act_.d = d;
    act_.bsum = bsum;
  }
  // ns4 in natural order (the types that read it are not permuted).
  const int32_t c = quant_offset(t);
  for (int64_t i = 0; i < K / 4; ++i) {
    ns4[i] = -c * (int32_t(qs[4 * i]) + qs[4 * i + 1] + qs[4 * i + 2] + qs[4 * i + 3]);
  }
  act_.qs = qs;
  act_.ns4 = ns4;
  return act_;
}

bool cpu_has_avx512_matvec() {
  static const bool has = [] {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
  }();
  return has;
}

void set_matvec_enabled(bool on) { enabled_flag().store(on); }

MatvecFn matvec_fn(DType t) {
  if (!enabled_flag().load()) return nullptr;
  // Float weights decode with the AVX2 tiles' own blocks wherever the tiles
  // run: a token gets the same bits at n = 1 as in any prefill chunk, which
  // the cache's chunking independence relies on (qgemm.h). AVX-512 float
  // kernels with 16-lane sums (other bits) were barely faster per core
  // from DRAM and no faster in a model's decode.
  if (act_format(t) == ActFormat::f32) {
    return qtile_mode() == QTileMode::off ? nullptr : hdecode_avx2(t);
  }
  return cpu_has_avx512_matvec() ? matvec_avx512(t) : nullptr;
}

MatvecManyFn matvec_many_fn(DType t, int tokens) {
  if (!enabled_flag().load() || !cpu_has_avx512_matvec()) return nullptr;
  return matvec_many_kquant_avx512(t, tokens);
}

}  // namespace rc::kernels
