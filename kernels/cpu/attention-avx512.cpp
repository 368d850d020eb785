// The attention task's primitives (attention-tiles.inc) on 512-bit
// registers, for head dims that are a multiple of 16: 16 keys (scores) or
// 16 dims (the weighted values) per register, K transposed 16 x 16 in
// registers, 4-row register blocks.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

#include "cpu-attention.h"
#include "fp16.h"
#include "rc-assert.h"

#include "simd-avx512-begin.h"

#if defined(RC_HAVE_AVX512_REGION)

namespace rc::kernels {
namespace {

constexpr int kTile = kAttentionTile;  // four 16-key vectors
constexpr int kRowBlock = 4;
constexpr bool kDecodeReadsVInPlace = true;  // attention-tiles.inc

// e^x, as avx2::exp_ps (the same polynomial) on 16 lanes; x is clamped to
// [-87, 88], so callers zero the lanes of masked keys themselves.
inline __m512 exp512(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  x = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), x);
  __m512 y = _mm512_set1_ps(1.9875691500e-4f);
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_fmadd_ps(y, _mm512_mul_ps(x, x), _mm512_add_ps(x, _mm512_set1_ps(1.0f)));
  const __m512i e =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(y, _mm512_castsi512_ps(e));
}

// 16 elements of a K or V row of the pool's type, widened.
template <DType kT>
inline __m512 load16(const char* row, int c) {
  if constexpr (kT == DType::f32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + c);
  } else {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row) + c / 16);
    if constexpr (kT == DType::f16) {
      return _mm512_cvtph_ps(h);
    } else {
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));  // bf16
    }
  }
}

// r[i] (row i of a 16 x 16 block) becomes column i.
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + k], 128-bit lane L: rows 4i .. 4i + 3 of column 4L + k.
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    const __m512 a = _mm512_shuffle_f32x4(u[k], u[4 + k], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 b = _mm512_shuffle_f32x4(u[k], u[4 + k], _MM_SHUFFLE(3, 1, 3, 1));
    const __m512 c = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 d = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(3, 1, 3, 1));
    r[k] = _mm512_shuffle_f32x4(a, c, _MM_SHUFFLE(2, 0, 2, 0));
    r[8 + k] = _mm512_shuffle_f32x4(a, c, _MM_SHUFFLE(3, 1, 3, 1));
    r[4 + k] = _mm512_shuffle_f32x4(b, d, _MM_SHUFFLE(2, 0, 2, 0));
    r[12 + k] = _mm512_shuffle_f32x4(b, d, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

// kt = K^T [hd][kTile] (fp32) of the tile's kTile K rows.
template <DType kT>
void load_k_tile_of(const char* const krow[], int hd, float* kt) {
  for (int t0 = 0; t0 < kTile; t0 += 16) {
    for (int c = 0; c < hd; c += 16) {
      __m512 r[16];
      for (int j = 0; j < 16; ++j) r[j] = load16<kT>(krow[t0 + j], c);
      transpose16(r);
      for (int j = 0; j < 16; ++j) _mm512_store_ps(kt + (c + j) * kTile + t0, r[j]);
    }
  }
}

// s[r][0 .. kTile) = scale * (q[r] . key t) for RB rows.
template <int RB>
void scores(const float* const q[], const float* kt, int hd, float scale, float* s) {
  __m512 acc[RB][4];
  for (auto& row : acc) {
    for (__m512& x : row) x = _mm512_setzero_ps();
  }
  for (int d = 0; d < hd; ++d) {
    __m512 k[4];
    for (int j = 0; j < 4; ++j) k[j] = _mm512_load_ps(kt + d * kTile + 16 * j);
    for (int r = 0; r < RB; ++r) {
      const __m512 qd = _mm512_set1_ps(q[r][d]);
      for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_fmadd_ps(qd, k[j], acc[r][j]);
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
  for (int r = 0; r < RB; ++r) {
    for (int j = 0; j < 4; ++j)
      _mm512_store_ps(s + r * kTile + 16 * j, _mm512_mul_ps(acc[r][j], sc));
  }
}

// acc[r][c .. c + 16 NV) += sum over the tile's keys t of p[r][t] * V row
// t for RB rows (the accumulators in registers for the whole tile).
template <DType kT, int RB, int NV>
void weighted_values_at(const float* p, const char* const vrow[], int c, float* const acc_rows[]) {
  __m512 acc[RB][NV];
  for (int r = 0; r < RB; ++r) {
    for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_load_ps(acc_rows[r] + c + 16 * j);
  }
  for (int t = 0; t < kTile; ++t) {
    __m512 vv[NV];
    for (int j = 0; j < NV; ++j) vv[j] = load16<kT>(vrow[t], c + 16 * j);
    for (int r = 0; r < RB; ++r) {
      const __m512 pt = _mm512_set1_ps(p[r * kTile + t]);
      for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_fmadd_ps(pt, vv[j], acc[r][j]);
    }
  }
  for (int r = 0; r < RB; ++r) {
    for (int j = 0; j < NV; ++j) _mm512_store_ps(acc_rows[r] + c + 16 * j, acc[r][j]);
  }
}

// acc[r][0 .. hd) += sum over the tile's keys t of p[r][t] * V row t for
// RB rows, 64 dims at a time.
template <DType kT, int RB>
void weighted_values(const float* p, const char* const vrow[], int hd, float* const acc_rows[]) {
  int c = 0;
  for (; c + 64 <= hd; c += 64) weighted_values_at<kT, RB, 4>(p, vrow, c, acc_rows);
  switch ((hd - c) / 16) {
    case 3:
      weighted_values_at<kT, RB, 3>(p, vrow, c, acc_rows);
      break;
    case 2:
      weighted_values_at<kT, RB, 2>(p, vrow, c, acc_rows);
      break;
    case 1:
      weighted_values_at<kT, RB, 1>(p, vrow, c, acc_rows);
      break;
    default:
      break;
  }
}

// One row's online softmax over the tile: keys from `valid` on are masked;
// p = e^(s - m) replaces s (masked keys exactly 0), the running max m and
// sum l move on, and acc is rescaled when m grows.
void softmax_row(float* s, int valid, float& m, float& l, float* acc, int hd) {
  __m512 sv[4];
  __m512 mx = _mm512_set1_ps(-INFINITY);
  __mmask16 live[4];
  for (int j = 0; j < 4; ++j) {
    const int n = std::clamp(valid - 16 * j, 0, 16);
    live[j] = __mmask16(n == 16 ? 0xffffu : (1u << n) - 1);
    sv[j] = _mm512_mask_blend_ps(live[j], _mm512_set1_ps(-INFINITY), _mm512_load_ps(s + 16 * j));
    mx = _mm512_max_ps(mx, sv[j]);
  }
  const float mt = std::max(m, _mm512_reduce_max_ps(mx));
  if (mt > m) {
    // exp(-inf) == 0 clears the empty initial state.
    const float c = std::exp(m - mt);
    l *= c;
    const __m512 cv = _mm512_set1_ps(c);
    for (int i = 0; i < hd; i += 16)
      _mm512_store_ps(acc + i, _mm512_mul_ps(cv, _mm512_load_ps(acc + i)));
    m = mt;
  }
  const __m512 mv = _mm512_set1_ps(mt);
  __m512 p[4];
  for (int j = 0; j < 4; ++j) {
    p[j] = _mm512_maskz_mov_ps(live[j], exp512(_mm512_sub_ps(sv[j], mv)));
    _mm512_store_ps(s + 16 * j, p[j]);
  }
  l += _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(p[0], p[1]), _mm512_add_ps(p[2], p[3])));
}

}  // namespace

#define RC_ATTENTION_TASK attention_task_avx512
#include "attention-tiles.inc"
#undef RC_ATTENTION_TASK

}  // namespace rc::kernels

#include "simd-avx512-end.h"

#else

namespace rc::kernels {
void attention_task_avx512(const AttentionArgs& a, const AttentionSeq& seq, int kv_head, int i0,
                           int i1, const AttentionSplit* split) {
  attention_task_avx2(a, seq, kv_head, i0, i1, split);
}
}  // namespace rc::kernels

#endif
