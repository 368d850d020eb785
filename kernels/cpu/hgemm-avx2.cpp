// qgemm.h tile kernels for float weights (F16 via F16C, BF16 by a shift,
// F32 as they are) against fp32 activations, with FMA: register blocks of
// up to 4 rows x 3 tokens, each (row, token) its own accumulator over k in
// order, so its result does not depend on the block shape or the token
// count (decode is the same kernel one token wide): a token's logits are
// the same bits whatever else shares its step, which sampled decoding
// with and without a cache hit relies on. Half-precision weights are
// converted in registers, never written out.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "matvec.h"
#include "qgemm.h"

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
#include "avx2-util.h"

namespace rc::kernels {
namespace {

using namespace avx2;

// The weight element of each kind: 16-bit halves, or fp32.
template <FloatWeight kW>
using Elem = std::conditional_t<kW == FloatWeight::f32, float, uint16_t>;

template <FloatWeight kW>
inline __m256 load_w(const Elem<kW>* p) {
  if constexpr (kW == FloatWeight::f32) {
    return _mm256_loadu_ps(p);
  } else if constexpr (kW == FloatWeight::bf16) {
    return load8_bf16(p);
  } else {
    return load8_f16(p);
  }
}

template <FloatWeight kW>
inline float w_scalar(Elem<kW> h) {
  if constexpr (kW == FloatWeight::f32) {
    return h;
  } else if constexpr (kW == FloatWeight::bf16) {
    return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(int(h) << 16)));
  } else {
    return half_to_float(h);
  }
}

// out[r * T + t] = row r . token t over K (8-wide steps, then the tail in
// order). With kPrefetch, each row's read position is fetched `ahead`
// bytes further too: decode passes the R rows' size, so as a block reads
// its rows the next block's are fetched (the rows of a matmul are
// contiguous; the hardware prefetchers stop at 4 KiB page boundaries).
// The lines go to L2, not L1: rows 4 KiB apart (F16 at K = 2048) share an
// L1 set, where the rows and their prefetched lines evicted each other
// (kernel-bench --decode-core, one core from DRAM, F16: about 15 GB/s into
// L1, 22-24 into L2, on a Zen 4 EPYC). Prefetching changes no arithmetic.
template <FloatWeight kW, int R, int T, bool kPrefetch = false>
void block(const Elem<kW>* const w[], const float* const x[], int64_t K, int64_t ahead,
           float* out) {
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  }
  // Steps of 8 elements per 64-byte line: one prefetch per row and line.
  constexpr int64_t kLineSteps = 64 / (8 * int64_t(sizeof(Elem<kW>)));
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    if constexpr (kPrefetch) {
      if ((k / 8) % kLineSteps == 0) {
        for (int r = 0; r < R; ++r)
          _mm_prefetch(reinterpret_cast<const char*>(w[r] + k) + ahead, _MM_HINT_T1);
      }
    }
    __m256 wv[R];
    for (int r = 0; r < R; ++r) wv[r] = load_w<kW>(w[r] + k);
    for (int t = 0; t < T; ++t) {
      const __m256 xv = _mm256_loadu_ps(x[t] + k);
      for (int r = 0; r < R; ++r) acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float s = hsum(acc[r][t]);
      // One rounding per step, as the 512-bit kernels (hgemm-avx512.cpp) do.
      for (int64_t j = k; j < K; ++j) s = std::fma(w_scalar<kW>(w[r][j]), x[t][j], s);
      out[r * T + t] = s;
    }
  }
}

template <FloatWeight kW, int R, bool kPrefetch = false>
void rows_block(const Elem<kW>* const w[], const QTileArgs& a, int r0) {
  float out[R * 3];
  const int64_t ahead = R * a.w_stride;
  for (int t0 = 0; t0 < a.tokens; t0 += 3) {
    const int nt = std::min(3, a.tokens - t0);
    const float* x[3];
    for (int t = 0; t < nt; ++t) {
      x[t] = reinterpret_cast<const float*>(a.act + (t0 + t) * a.act_stride);
    }
    if (nt == 3) {
      block<kW, R, 3, kPrefetch>(w, x, a.K, ahead, out);
    } else if (nt == 2) {
      block<kW, R, 2, kPrefetch>(w, x, a.K, ahead, out);
    } else {
      block<kW, R, 1, kPrefetch>(w, x, a.K, ahead, out);
    }
    for (int r = 0; r < R && r0 + r < a.rows; ++r) {
      const float b = a.bias ? a.bias[r0 + r] : 0.0f;
      for (int t = 0; t < nt; ++t) a.y[(t0 + t) * a.ldy + r0 + r] = out[r * nt + t] + b;
    }
  }
}

template <FloatWeight kW>
void tile_float(const QTileArgs& a) {
  const Elem<kW>* w[kQTileRows];
  for (int r = 0; r < kQTileRows; ++r) {
    w[r] = reinterpret_cast<const Elem<kW>*>(a.w + std::min(r, a.rows - 1) * a.w_stride);
  }
  if (a.tokens <= 2) {
    // Decode: four rows at once. Each row is one FMA chain (its bits fix
    // the order), so the rows in flight set the rate: two chains take 16
    // weights per FMA latency, under what memory gives two cores of a
    // current desktop CPU. In the model four rows were no slower; eight
    // were slower (rows 4 KiB apart share an L1 set, which eight rows
    // and their prefetched lines overflow). Not measured on an AVX2-only CPU.
    for (int r0 = 0; r0 < a.rows; r0 += 4) rows_block<kW, 4, true>(w + r0, a, r0);
    return;
  }
  // Short steps (drafting's verifying steps: fewer tokens than the lane
  // kernels take) read the weights once too, so they stream them the same
  // way: a 3- or 5-token step of the bundled model took 30% less time.
  constexpr int kShortStep = 8;
  if (a.tokens < kShortStep) {
    for (int r0 = 0; r0 < a.rows; r0 += 4) rows_block<kW, 4, true>(w + r0, a, r0);
    return;
  }
  for (int r0 = 0; r0 < a.rows; r0 += 4) rows_block<kW, 4>(w + r0, a, r0);
}

// Decode's rows through the matvec interface: tile_float's decode blocks
// (four rows at once, the next four prefetched), so every row gets the
// tiles' bits. A short last block repeats its last row, as tile_float does.
template <FloatWeight kW>
void decode_rows(const uint8_t* w, int64_t stride, int64_t rows, const MatvecAct& a, float* y) {
  const float* x[1] = {a.x};
  for (int64_t r0 = 0; r0 < rows; r0 += 4) {
    const Elem<kW>* wr[4];
    for (int r = 0; r < 4; ++r) {
      wr[r] = reinterpret_cast<const Elem<kW>*>(w + std::min(r0 + r, rows - 1) * stride);
    }
    float out[4];
    block<kW, 4, 1, true>(wr, x, a.K, 4 * stride, out);
    for (int r = 0; r < 4 && r0 + r < rows; ++r) y[r0 + r] = out[r];
  }
}

}  // namespace

MatvecFn hdecode_avx2(DType t) {
  switch (t) {
    case DType::f16:
      return decode_rows<FloatWeight::f16>;
    case DType::bf16:
      return decode_rows<FloatWeight::bf16>;
    case DType::f32:
      return decode_rows<FloatWeight::f32>;
    default:
      return nullptr;
  }
}

QTileFn htile_avx2(DType t) {
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

}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else

namespace rc::kernels {
QTileFn htile_avx2(DType) { return nullptr; }
MatvecFn hdecode_avx2(DType) { return nullptr; }
}  // namespace rc::kernels

#endif
