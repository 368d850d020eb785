// F16 / BF16 / F32 prefill kernels of qgemm-avx512.h: token lanes, like the
// quantized ones. The fp32 activations of 16 tokens are interleaved once
// per matmul ([K][16 tokens]); a row tile's half-precision weights are
// converted to fp32 once per chunk of tokens (F32 rows are read in place),
// so the inner loop is one broadcast load and one FMA per row and 16
// tokens; a register tile is 8 rows x 32 tokens.
//
// Same bits as hgemm-avx2.cpp: there, (row, token) sums k = j mod 8 in lane
// j of one accumulator (8-wide steps), adds the lanes as hsum does, then
// the tail past the last whole step in order. Here phase j runs over the
// same k in the same order with one accumulator per (row, token), and the
// phases and the tail are added in the same order.
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

int64_t h512_group_bytes(int64_t K) { return K * kL * 4; }

int64_t h512_scratch_bytes(int64_t K) { return kQ512Rows * ((K * 4 + 63) / 64 * 64); }

void h512_pack_acts(const uint8_t* act, int64_t act_stride, int tokens, int64_t K, uint8_t* dst) {
  auto* d = reinterpret_cast<float*>(dst);
  std::memset(dst, 0, size_t(h512_group_bytes(K)));
  for (int t = 0; t < tokens; ++t) {
    const auto* x = reinterpret_cast<const float*>(act + t * act_stride);
    for (int64_t k = 0; k < K; ++k) d[k * kL + t] = x[k];
  }
}

Q512Fn h512_table(DType t) { return h512_table_impl(t); }

}  // namespace rc::kernels

#include "simd-avx512-begin.h"

#if defined(RC_HAVE_AVX512_REGION)
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

template <bool kBf16>
void convert_row(const uint16_t* w, int64_t K, float* dst) {
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + k));
    const __m512 f = kBf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
                           : _mm512_cvtph_ps(h);
    _mm512_storeu_ps(dst + k, f);
  }
  for (; k < K; ++k) dst[k] = w_scalar<kBf16>(w[k]);
}

// Phase j (k = j, j + 8, ... below 8 * steps) of G groups into acc[r][g].
// pf: the next tile's rows to prefetch (one line of each every four
// steps covers them), or null.
template <int G>
inline void phase(const float* const ws[kQ512Rows], const float* xg, int64_t gstride, int j,
                  int64_t steps, const Q512Args* pf, __m512 acc[kQ512Rows][2]) {
  for (int r = 0; r < kQ512Rows; ++r) {
    for (int g = 0; g < G; ++g) acc[r][g] = _mm512_setzero_ps();
  }
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t k = 8 * s + j;
    if (pf && s % 4 == 0) {
      for (int r = 0; r < kQ512Rows; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(pf->next_w + r * pf->w_stride + 16 * s),
                     _MM_HINT_T0);
      }
    }
    __m512 xv[G];
    for (int g = 0; g < G; ++g) xv[g] = _mm512_loadu_ps(xg + g * gstride + k * kL);
    for (int r = 0; r < kQ512Rows; ++r) {
      const __m512 wb = _mm512_set1_ps(ws[r][k]);
      for (int g = 0; g < G; ++g) acc[r][g] = _mm512_fmadd_ps(wb, xv[g], acc[r][g]);
    }
  }
}

// Groups g0 .. g0 + G - 1 of the tile: the eight phases, then per (row,
// token) the lanes in hsum's order and the tail.
template <int G>
void half_groups(const Q512Args& a, const float* const ws[kQ512Rows], int64_t g0) {
  const int64_t steps = a.K / 8, gstride = a.group_bytes / 4;
  const auto* xg = reinterpret_cast<const float*>(a.act + g0 * a.group_bytes);
  alignas(64) float lanes[8][kQ512Rows][G][kL];
  for (int j = 0; j < 8; ++j) {
    __m512 acc[kQ512Rows][2];
    phase<G>(ws, xg, gstride, j, steps, j == 0 && g0 == 0 && a.next_w ? &a : nullptr, acc);
    for (int r = 0; r < kQ512Rows; ++r) {
      for (int g = 0; g < G; ++g) _mm512_store_ps(lanes[j][r][g], acc[r][g]);
    }
  }
  for (int r = 0; r < a.rows; ++r) {
    const float b = a.bias ? a.bias[r] : 0.0f;
    for (int g = 0; g < G; ++g) {
      auto L = [&](int j) { return _mm512_load_ps(lanes[j][r][g]); };
      const __m512 s0 = _mm512_add_ps(_mm512_add_ps(L(0), L(4)), _mm512_add_ps(L(2), L(6)));
      const __m512 s1 = _mm512_add_ps(_mm512_add_ps(L(1), L(5)), _mm512_add_ps(L(3), L(7)));
      alignas(64) float v[kL];
      _mm512_store_ps(v, _mm512_add_ps(s0, s1));
      const int64_t t0 = (g0 + g) * kL;
      const int n = int(std::min<int64_t>(kL, a.tokens - t0));
      const float* x = xg + g * gstride;
      for (int t = 0; t < n; ++t) {
        float s = v[t];
        // One rounding per step, as hgemm-avx2.cpp's tail.
        for (int64_t k = 8 * steps; k < a.K; ++k) s = std::fma(ws[r][k], x[k * kL + t], s);
        a.y[(t0 + t) * a.ldy + r] = s + b;
      }
    }
  }
}

template <FloatWeight kW>
void tile_float(const Q512Args& a) {
  const float* ws[kQ512Rows];
  const int64_t rs = (a.K * 4 + 63) / 64 * 64;
  for (int r = 0; r < kQ512Rows; ++r) {
    // A short tile repeats its last row (computed and dropped).
    const int rr = std::min(r, a.rows - 1);
    const uint8_t* src = a.w + rr * a.w_stride;
    if constexpr (kW == FloatWeight::f32) {
      ws[r] = reinterpret_cast<const float*>(src);
    } else {
      auto* dst = reinterpret_cast<float*>(a.scratch + rr * rs);
      ws[r] = dst;
      if (r == rr)
        convert_row<kW == FloatWeight::bf16>(reinterpret_cast<const uint16_t*>(src), a.K, dst);
    }
  }
  const int64_t groups = (a.tokens + kL - 1) / kL;
  int64_t g = 0;
  for (; g + 2 <= groups; g += 2) half_groups<2>(a, ws, g);
  if (g < groups) half_groups<1>(a, ws, g);
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
