// F16 / BF16 / F32 prefill kernels of qgemm-avx512.h. A 512-bit register
// holds two tokens' eight k-lanes: [token a: k = 8s .. 8s+7 | token b: the
// same k], multiplied by the weight row's eight values broadcast to both
// halves. Each half is then exactly hgemm-avx2.cpp's ymm accumulator for
// its token (lane j sums k = j mod 8 in order with one FMA per step), the
// lanes are added as hsum does and the tail past the last whole step
// follows with one FMA per element: a (row, token) result is bit-identical
// to the AVX2 tiles, so decode and prefill agree. Activations are packed
// once per matmul into pair-major steps; weight rows are read in place
// (half-precision values converted to fp32 in registers as they are read);
// a register tile is 6 rows x 4 token pairs, and all reads run forward
// through memory (no strided passes).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "qgemm-avx512.h"
#include "qgemm.h"

namespace rc::kernels {

namespace {
constexpr int64_t kL = kQ512Tokens;
Q512Fn h512_table_impl(DType t);
}  // namespace

namespace {
// One group of 16 tokens (8 pairs): [pair][step][16 floats], then the
// tails (k >= 8 * steps) as [token][8 floats], zero padded.
int64_t h512_steps(int64_t K) { return K / 8; }
int64_t h512_tail_offset(int64_t K) { return 8 * h512_steps(K) * 16; }  // in floats
}  // namespace

int64_t h512_group_bytes(int64_t K) { return (h512_tail_offset(K) + kL * 8) * 4; }

void h512_pack_acts(const uint8_t* act, int64_t act_stride, int tokens, int64_t K, uint8_t* dst) {
  auto* d = reinterpret_cast<float*>(dst);
  std::memset(dst, 0, size_t(h512_group_bytes(K)));
  const int64_t steps = h512_steps(K), tail = h512_tail_offset(K);
  for (int t = 0; t < tokens; ++t) {
    const auto* x = reinterpret_cast<const float*>(act + t * act_stride);
    float* pair = d + (t / 2) * steps * 16 + (t % 2) * 8;
    for (int64_t s = 0; s < steps; ++s) std::memcpy(pair + s * 16, x + 8 * s, 32);
    for (int64_t k = 8 * steps; k < K; ++k) d[tail + t * 8 + (k - 8 * steps)] = x[k];
  }
}

Q512Fn h512_table(DType t) { return h512_table_impl(t); }

}  // namespace rc::kernels

#include "simd-avx512-begin.h"

#if defined(RC_HAVE_AVX512_REGION)
#include "avx2-util.h"  // the region enables AVX2 too

namespace rc::kernels {
namespace {

template <bool kBf16>
inline float w_scalar(uint16_t h) {
  if constexpr (kBf16) {
    return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(int(h) << 16)));
  } else {
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(int(h))));
  }
}

// A register tile is 6 rows x 4 token pairs: 4-row tiles of any width
// reach a clearly lower FMA rate than 5- and 6-row tiles.
// Blocking over k (accumulators spilled between blocks) measured slower
// than one pass over K.
constexpr int kRows = 6;
constexpr int kPairs = 4;
static_assert(kH512Rows % kRows == 0);

// A share of the next tile's weight bytes to fetch into cache while a
// register tile computes: `lines` lines from `at`, `per` of them every
// `every` steps.
struct PrefetchShare {
  const char* at = nullptr;
  int64_t lines = 0, per = 0, every = 1;
};

// Share `c` of `count` equal shares of the next tile's bytes, for a
// register tile of `steps` steps.
PrefetchShare prefetch_share(const Q512Args& a, int64_t c, int64_t count, int64_t steps) {
  PrefetchShare p;
  if (!a.next_w) return p;
  const int64_t lines = (kH512Rows * a.w_stride + 63) / 64;
  const int64_t l0 = lines * c / count, l1 = lines * (c + 1) / count;
  p.at = reinterpret_cast<const char*>(a.next_w) + 64 * l0;
  p.lines = l1 - l0;
  const int64_t st = std::max<int64_t>(1, steps);
  p.per = (p.lines + st - 1) / st;
  p.every = p.lines > 0 ? std::max<int64_t>(1, st * p.per / p.lines) : st;
  return p;
}

// A weight row's eight values at step s as fp32 in both halves of a
// register, converted where they are read: a conversion pass into fp32
// scratch instead stalled on its loads and stores and cost a sizeable
// share of an F16 prefill.
template <FloatWeight kW>
inline __m512 row_step(const void* row, int64_t s) {
  if constexpr (kW == FloatWeight::f32) {
    const __m256d w8 = _mm256_castps_pd(_mm256_loadu_ps(static_cast<const float*>(row) + 8 * s));
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(w8));
  } else {
    const __m256i h = _mm256_broadcastsi128_si256(_mm_loadu_si128(
        reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + 8 * s)));
    if constexpr (kW == FloatWeight::bf16) {
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
      return _mm512_cvtph_ps(h);
    }
  }
}

// Element k of a weight row as fp32.
template <FloatWeight kW>
inline float row_elem(const void* row, int64_t k) {
  if constexpr (kW == FloatWeight::f32) {
    return static_cast<const float*>(row)[k];
  } else {
    return w_scalar<kW == FloatWeight::bf16>(static_cast<const uint16_t*>(row)[k]);
  }
}

// Rows r0 .. r0 + kRows - 1 of the tile (ws) against P pairs starting at
// pair q0, written to y with the tails and bias, fetching share pf of the
// next tile as the steps go: spread over every register tile, the fetches
// keep pace with DRAM instead of queueing behind each other.
template <FloatWeight kW, int P>
void pair_block(const Q512Args& a, const void* const ws[], int r0, int64_t q0, PrefetchShare pf) {
  const int64_t steps = h512_steps(a.K), gfloats = a.group_bytes / 4;
  const auto* act = reinterpret_cast<const float*>(a.act);
  const float* xp[P];
  for (int p = 0; p < P; ++p) {
    const int64_t q = q0 + p;
    xp[p] = act + (q / (kL / 2)) * gfloats + (q % (kL / 2)) * steps * 16;
  }
  __m512 acc[kRows][P];
  for (int r = 0; r < kRows; ++r) {
    for (int p = 0; p < P; ++p) acc[r][p] = _mm512_setzero_ps();
  }
  int64_t countdown = 1;
  for (int64_t s = 0; s < steps; ++s) {
    if (--countdown == 0) {
      countdown = pf.every;
      for (int64_t i = 0; i < pf.per && pf.lines > 0; ++i, --pf.lines, pf.at += 64)
        _mm_prefetch(pf.at, _MM_HINT_T0);
    }
    __m512 wv[kRows];
    for (int r = 0; r < kRows; ++r) wv[r] = row_step<kW>(ws[r0 + r], s);
    for (int p = 0; p < P; ++p) {
      const __m512 xv = _mm512_loadu_ps(xp[p] + 16 * s);
      for (int r = 0; r < kRows; ++r) acc[r][p] = _mm512_fmadd_ps(wv[r], xv, acc[r][p]);
    }
  }
  const float* tails = act + h512_tail_offset(a.K);
  for (int r = 0; r < kRows && r0 + r < a.rows; ++r) {
    const float b = a.bias ? a.bias[r0 + r] : 0.0f;
    const void* w = ws[r0 + r];
    for (int p = 0; p < P; ++p) {
      for (int h = 0; h < 2; ++h) {
        const int64_t t = 2 * (q0 + p) + h;
        if (t >= a.tokens) break;
        // The AVX2 tiles' own lane sum, so the bits are theirs by construction.
        float s = avx2::hsum(
            h == 0 ? _mm512_castps512_ps256(acc[r][p])
                   : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[r][p]), 1)));
        const float* xt = tails + (t / kL) * gfloats + (t % kL) * 8;
        // One rounding per step, as hgemm-avx2.cpp's tail.
        for (int64_t k = 8 * steps; k < a.K; ++k)
          s = std::fma(row_elem<kW>(w, k), xt[k - 8 * steps], s);
        a.y[t * a.ldy + r0 + r] = s + b;
      }
    }
  }
}

template <FloatWeight kW>
void tile_float(const Q512Args& a) {
  const void* ws[kH512Rows];
  // A short tile repeats its last row (computed and dropped).
  for (int r = 0; r < kH512Rows; ++r) ws[r] = a.w + std::min(r, a.rows - 1) * a.w_stride;
  const int64_t pairs = (a.tokens + 1) / 2, blocks = (pairs + kPairs - 1) / kPairs;
  const int64_t subtiles = (a.rows + kRows - 1) / kRows, steps = h512_steps(a.K);
  // Pairs outer: a pair block's activations, read from L2 or L3, serve
  // both 6-row halves of the tile.
  for (int64_t q0 = 0; q0 < pairs; q0 += kPairs) {
    for (int r0 = 0; r0 < kH512Rows && r0 < a.rows; r0 += kRows) {
      const PrefetchShare pf =
          prefetch_share(a, (q0 / kPairs) * subtiles + r0 / kRows, subtiles * blocks, steps);
      switch (std::min<int64_t>(kPairs, pairs - q0)) {
        case 4:
          pair_block<kW, 4>(a, ws, r0, q0, pf);
          break;
        case 3:
          pair_block<kW, 3>(a, ws, r0, q0, pf);
          break;
        case 2:
          pair_block<kW, 2>(a, ws, r0, q0, pf);
          break;
        default:
          pair_block<kW, 1>(a, ws, r0, q0, pf);
          break;
      }
    }
  }
}

Q512Fn h512_table_impl(DType t) {
  switch (t) {
    case DType::f16:
      return tile_float<FloatWeight::f16>;
    case DType::bf16:
      return tile_float<FloatWeight::bf16>;
    case DType::f32:
      return tile_float<FloatWeight::f32>;
    default:
      return nullptr;
  }
}

}  // namespace
}  // namespace rc::kernels

#include "simd-avx512-end.h"

#else

namespace rc::kernels {
namespace {
Q512Fn h512_table_impl(DType) { return nullptr; }
}  // namespace
}  // namespace rc::kernels

#endif
