// The attention task's primitives (attention-tiles.inc) on 256-bit
// registers, for head dims that are a multiple of 8: 8 keys (scores) or 8
// dims (the weighted values) per register, 32 at a time, K transposed 8 x 8
// in registers, 3-row register blocks (12 accumulators of 16 registers).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

#include "cpu-attention.h"
#include "fp16.h"
#include "rc-assert.h"

#include "simd-avx2-begin.h"

#if defined(RC_HAVE_AVX2_REGION)
#include "avx2-util.h"

namespace rc::kernels {
namespace {

constexpr int kTile = kAttentionTile;
constexpr int kRowBlock = 3;
constexpr bool kDecodeReadsVInPlace = true;  // attention-tiles.inc

// 8 elements of a K or V row of the pool's type, widened.
template <DType kT>
inline __m256 load8(const char* row, int c) {
  if constexpr (kT == DType::f32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + c);
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row) + c / 8);
    if constexpr (kT == DType::f16) {
      return _mm256_cvtph_ps(h);
    } else {
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));  // bf16
    }
  }
}

// r[i] (row i of an 8 x 8 block) becomes column i.
inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + k], 128-bit lane L: rows 4i .. 4i + 3 of column 4L + k.
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm256_permute2f128_ps(u[k], u[4 + k], 0x20);
    r[4 + k] = _mm256_permute2f128_ps(u[k], u[4 + k], 0x31);
  }
}

template <DType kT>
void load_k_tile_of(const char* const krow[], int hd, float* kt) {
  for (int t0 = 0; t0 < kTile; t0 += 8) {
    for (int c = 0; c < hd; c += 8) {
      __m256 r[8];
      for (int j = 0; j < 8; ++j) r[j] = load8<kT>(krow[t0 + j], c);
      transpose8(r);
      for (int j = 0; j < 8; ++j) _mm256_store_ps(kt + (c + j) * kTile + t0, r[j]);
    }
  }
}

// Keys 32h .. 32h + 31 of s for RB rows: over d in order, as for any RB.
template <int RB>
void scores(const float* const q[], const float* kt, int hd, float scale, float* s) {
  const __m256 sc = _mm256_set1_ps(scale);
  for (int h = 0; h < kTile; h += 32) {
    __m256 acc[RB][4];
    for (auto& row : acc) {
      for (__m256& x : row) x = _mm256_setzero_ps();
    }
    for (int d = 0; d < hd; ++d) {
      __m256 k[4];
      for (int j = 0; j < 4; ++j) k[j] = _mm256_load_ps(kt + d * kTile + h + 8 * j);
      for (int r = 0; r < RB; ++r) {
        const __m256 qd = _mm256_broadcast_ss(q[r] + d);
        for (int j = 0; j < 4; ++j) acc[r][j] = _mm256_fmadd_ps(qd, k[j], acc[r][j]);
      }
    }
    for (int r = 0; r < RB; ++r) {
      for (int j = 0; j < 4; ++j)
        _mm256_store_ps(s + r * kTile + h + 8 * j, _mm256_mul_ps(acc[r][j], sc));
    }
  }
}

template <DType kT, int RB, int NV>
void weighted_values_at(const float* p, const char* const vrow[], int c, float* const acc_rows[]) {
  __m256 acc[RB][NV];
  for (int r = 0; r < RB; ++r) {
    for (int j = 0; j < NV; ++j) acc[r][j] = _mm256_load_ps(acc_rows[r] + c + 8 * j);
  }
  for (int t = 0; t < kTile; ++t) {
    __m256 vv[NV];
    for (int j = 0; j < NV; ++j) vv[j] = load8<kT>(vrow[t], c + 8 * j);
    for (int r = 0; r < RB; ++r) {
      const __m256 pt = _mm256_broadcast_ss(p + r * kTile + t);
      for (int j = 0; j < NV; ++j) acc[r][j] = _mm256_fmadd_ps(pt, vv[j], acc[r][j]);
    }
  }
  for (int r = 0; r < RB; ++r) {
    for (int j = 0; j < NV; ++j) _mm256_store_ps(acc_rows[r] + c + 8 * j, acc[r][j]);
  }
}

// 32 dims at a time (the accumulators in registers for the whole tile).
template <DType kT, int RB>
void weighted_values(const float* p, const char* const vrow[], int hd, float* const acc_rows[]) {
  int c = 0;
  for (; c + 32 <= hd; c += 32) weighted_values_at<kT, RB, 4>(p, vrow, c, acc_rows);
  switch ((hd - c) / 8) {
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

void softmax_row(float* s, int valid, float& m, float& l, float* acc, int hd) {
  constexpr int kVecs = kTile / 8;
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256 sv[kVecs], live[kVecs];
  __m256 mx = neg_inf;
  for (int j = 0; j < kVecs; ++j) {
    live[j] = _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(_mm256_set1_epi32(valid - 8 * j), lane));  // lane < valid - 8j
    sv[j] = _mm256_blendv_ps(neg_inf, _mm256_load_ps(s + 8 * j), live[j]);
    mx = _mm256_max_ps(mx, sv[j]);
  }
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  const float mt = std::max(m, _mm_cvtss_f32(m4));
  if (mt > m) {
    // exp(-inf) == 0 clears the empty initial state.
    const float c = std::exp(m - mt);
    l *= c;
    const __m256 cv = _mm256_set1_ps(c);
    for (int i = 0; i < hd; i += 8)
      _mm256_store_ps(acc + i, _mm256_mul_ps(cv, _mm256_load_ps(acc + i)));
    m = mt;
  }
  const __m256 mv = _mm256_set1_ps(mt);
  __m256 p[kVecs];
  for (int j = 0; j < kVecs; ++j) {
    p[j] = _mm256_and_ps(live[j], avx2::exp_ps(_mm256_sub_ps(sv[j], mv)));
    _mm256_store_ps(s + 8 * j, p[j]);
  }
  for (int w = kVecs / 2; w > 0; w /= 2) {
    for (int j = 0; j < w; ++j) p[j] = _mm256_add_ps(p[j], p[j + w]);
  }
  l += avx2::hsum(p[0]);
}

}  // namespace

#define RC_ATTENTION_TASK attention_task_avx2
#include "attention-tiles.inc"
#undef RC_ATTENTION_TASK

}  // namespace rc::kernels

#include "simd-avx2-end.h"

#else

namespace rc::kernels {
void attention_task_avx2(const AttentionArgs& a, const AttentionSeq& seq, int kv_head, int i0,
                         int i1, const AttentionSplit* split) {
  attention_task_scalar(a, seq, kv_head, i0, i1, split);
}
}  // namespace rc::kernels

#endif
