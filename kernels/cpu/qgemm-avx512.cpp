// The 512-bit token-lane prefill kernels of qgemm-avx512.h.
#include "qgemm-avx512.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "act-quant.h"
#include "fp16.h"
#include "qgemm.h"
#include "quant-blocks.h"

namespace rc::kernels {

namespace {

constexpr int64_t kL = kQ512Tokens;

Q512Fn q512_table(DType t);  // the kernels of the AVX-512 region below

bool k_quant(DType t) { return t == DType::q4_k || t == DType::q5_k || t == DType::q6_k; }

// Per-group layout: quants [K/4][16 tokens][4 bytes], then the block scales
// [blocks][16] as fp32, then (K-quants) the extra integer terms [..][16]:
// Q4_K/Q5_K the pairs (bsum[2p], bsum[2p+1]) as two int16, Q6_K -32 times
// the sum of every 16 activation bytes.
int64_t extra_bytes(DType t, int64_t K) {
  if (t == DType::q6_k) return K / 16 * kL * 4;
  if (k_quant(t)) return K / 256 * 4 * kL * 4;
  return 0;
}
int64_t scale_bytes(DType t, int64_t K) { return K / block_elems(t) * kL * 4; }

// Per weight row of a tile (K-quants): quants as bytes [K], sub-block scales
// as int32 [K/32 or K/16], then per super-block d, dmin (fp32) and the min
// pairs (m[2p], m[2p+1]) as two int16 [4]. Q8_0: -128 * (sum of the block's
// quants) as int32 [K/32], then d as fp32 [K/32].
int64_t sub_blocks(DType t, int64_t K) { return t == DType::q6_k ? K / 16 : K / 32; }
int64_t row_scratch(DType t, int64_t K) {
  const int64_t b = k_quant(t) ? K + 4 * sub_blocks(t, K) + K / 256 * (4 + 4 + 16) : K / 32 * 8;
  return (b + 63) / 64 * 64;
}

}  // namespace

bool float_type(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32; }

int64_t q512_group_bytes(DType t, int64_t K) {
  if (float_type(t)) return h512_group_bytes(K);
  return K * kL + scale_bytes(t, K) + extra_bytes(t, K);
}

int q512_tile_rows(DType t) { return float_type(t) ? kH512Rows : kQ512Rows; }

int64_t q512_scratch_bytes(DType t, int64_t K) {
  return float_type(t) ? h512_scratch_bytes(K) : kQ512Rows * row_scratch(t, K);
}

void q512_pack_acts(DType t, const uint8_t* act, int64_t act_stride, int tokens, int64_t K,
                    uint8_t* dst) {
  if (float_type(t)) return h512_pack_acts(act, act_stride, tokens, K, dst);
  const bool q8 = t == DType::q8_0;
  // Missing tokens: zero activations (Q8_0 stores them offset by 128).
  std::memset(dst, q8 ? 0x80 : 0, size_t(K * kL));
  std::memset(dst + K * kL, 0, size_t(scale_bytes(t, K) + extra_bytes(t, K)));
  auto* d = reinterpret_cast<float*>(dst + K * kL);
  auto* extra = reinterpret_cast<int32_t*>(dst + K * kL + scale_bytes(t, K));
  for (int tok = 0; tok < tokens; ++tok) {
    const uint8_t* row = act + tok * act_stride;
    auto put4 = [&](int64_t e, const int8_t* src) {
      uint8_t* p = dst + (e / 4 * kL + tok) * 4;
      std::memcpy(p, src, 4);
      if (q8) {
        for (int k = 0; k < 4; ++k) p[k] ^= 0x80;  // x + 128 as an unsigned byte
      }
    };
    if (q8) {
      const auto* x = reinterpret_cast<const BlockQ8A*>(row);
      for (int64_t b = 0; b < K / 32; ++b) {
        for (int e = 0; e < 32; e += 4) put4(32 * b + e, x[b].qs + e);
        d[b * kL + tok] = x[b].d;
      }
      continue;
    }
    const auto* x = reinterpret_cast<const BlockQ8K*>(row);
    for (int64_t i = 0; i < K / 256; ++i) {
      for (int e = 0; e < 256; e += 4) put4(256 * i + e, x[i].qs + e);
      d[i * kL + tok] = x[i].d;
      if (t == DType::q6_k) {
        for (int c = 0; c < 16; ++c) {
          int s = 0;
          for (int j = 0; j < 16; ++j) s += x[i].qs[16 * c + j];
          extra[(16 * i + c) * kL + tok] = -32 * s;
        }
      } else {
        for (int p = 0; p < 4; ++p) {
          const uint32_t lo = uint16_t(x[i].bsum[2 * p]), hi = uint16_t(x[i].bsum[2 * p + 1]);
          extra[(4 * i + p) * kL + tok] = int32_t(lo | (hi << 16));
        }
      }
    }
  }
}

}  // namespace rc::kernels

// The region below is compiled for AVX-512 (F, BW, VL, VNNI); q512_fn hands
// its kernels out only when cpu_has_vnni(). Only file-local code lives in it.
#include "simd-avx512-begin.h"

#if defined(RC_HAVE_AVX512_REGION)
namespace rc::kernels {
namespace {

inline float h2f(uint16_t h) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(int(h)))); }
inline __m256i ld32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline int32_t ld4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Prefetches bytes [b0, b1) of each of the kQ512Rows rows of the next tile.
inline void prefetch_next(const Q512Args& a, int64_t b0, int64_t b1) {
  if (!a.next_w) return;
  for (int r = 0; r < kQ512Rows; ++r) {
    const char* row = reinterpret_cast<const char*>(a.next_w + r * a.w_stride);
    for (int64_t b = b0; b < b1; b += 64) _mm_prefetch(row + b, _MM_HINT_T0);
  }
}

// One decoded K-quant weight row (layout: row_scratch).
struct KRow {
  uint8_t* q;
  int32_t* sc;
  float* d;
  float* dmin;
  int32_t* mp;
};

KRow k_row(DType t, uint8_t* base, int64_t K) {
  KRow r;
  r.q = base;
  r.sc = reinterpret_cast<int32_t*>(base + K);
  r.d = reinterpret_cast<float*>(r.sc + sub_blocks(t, K));
  r.dmin = r.d + K / 256;
  r.mp = reinterpret_cast<int32_t*>(r.dmin + K / 256);
  return r;
}

// Q4_K / Q5_K super-block i of a row into bytes (element order), scales,
// d, dmin and min pairs.
template <class Block>
void decode_q45k(const Block& b, int64_t i, const KRow& r) {
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; ++j) q4k_scale_min(j, b.scales, &sc[j], &m[j]);
  for (int j = 0; j < 8; ++j) r.sc[8 * i + j] = sc[j];
  for (int p = 0; p < 4; ++p)
    r.mp[4 * i + p] = int32_t(uint32_t(m[2 * p]) | (uint32_t(m[2 * p + 1]) << 16));
  r.d[i] = h2f(b.d);
  r.dmin[i] = h2f(b.dmin);
  const __m256i mask = _mm256_set1_epi8(0x0f);
  for (int p = 0; p < 4; ++p) {
    const __m256i q = ld32(b.qs + 32 * p);
    __m256i lo = _mm256_and_si256(q, mask), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), mask);
    if constexpr (std::is_same_v<Block, BlockQ5_K>) {
      // Bit s of each qh byte to bit 4 (the mask drops what crosses bytes).
      const __m256i qh = ld32(b.qh), b4 = _mm256_set1_epi8(0x10);
      const int s = 2 * p;
      const __m256i h0 = s <= 4 ? _mm256_slli_epi16(qh, 4 - s) : _mm256_srli_epi16(qh, s - 4);
      const __m256i h1 = s + 1 <= 4 ? _mm256_slli_epi16(qh, 3 - s) : _mm256_srli_epi16(qh, s - 3);
      lo = _mm256_or_si256(lo, _mm256_and_si256(h0, b4));
      hi = _mm256_or_si256(hi, _mm256_and_si256(h1, b4));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(r.q + 256 * i + 64 * p), lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(r.q + 256 * i + 64 * p + 32), hi);
  }
}

// Q6_K super-block i: quants 0..63 in element order, the 16 scales.
void decode_q6k(const BlockQ6_K& b, int64_t i, const KRow& r) {
  for (int c = 0; c < 16; ++c) r.sc[16 * i + c] = b.scales[c];
  r.d[i] = h2f(b.d);
  const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
  for (int half = 0; half < 2; ++half) {
    const __m256i ql0 = ld32(b.ql + 64 * half), ql1 = ld32(b.ql + 64 * half + 32);
    const __m256i qh = ld32(b.qh + 32 * half);
    const __m256i q[4] = {
        _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30)),
        _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), _mm256_and_si256(qh, m30)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                        _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30))};
    for (int k = 0; k < 4; ++k) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(r.q + 256 * i + 128 * half + 32 * k), q[k]);
    }
  }
}

// Results of one row for the tokens of group g: y = acc + bias, as the
// AVX2 kernels store them.
inline void store_row(const Q512Args& a, int64_t g, int r, __m512 c) {
  alignas(64) float v[kL];
  _mm512_store_ps(v, c);
  const int n = int(std::min<int64_t>(kL, a.tokens - g * kL));
  const float b = a.bias ? a.bias[r] : 0.0f;
  for (int t = 0; t < n; ++t) a.y[(g * kL + t) * a.ldy + r] = v[t] + b;
}

// ---- K-quants: per super-block, the exact integer sum_j sc_j * dot_j (Q6_K:
// with the -32 offset folded into each 16-element dot) per (row, token). ----
template <bool kQ6>
void kq_group(const Q512Args& a, int64_t bbytes, bool pf, const KRow* rows, const uint8_t* xg,
              int64_t K, __m512 c[kQ512Rows]) {
  constexpr int kSub = kQ6 ? 16 : 8;      // sub-blocks per super-block
  constexpr int kSteps = 256 / kSub / 4;  // 4-byte steps per sub-block
  const auto* xq = xg;
  const auto* xd = reinterpret_cast<const float*>(xg + K * kL);
  const auto* xx = reinterpret_cast<const int32_t*>(xg + K * kL + K / 256 * kL * 4);
  for (int64_t i = 0; i < K / 256; ++i) {
    if (pf) prefetch_next(a, i * bbytes, (i + 1) * bbytes);
    __m512i is[kQ512Rows];
    for (int r = 0; r < kQ512Rows; ++r) is[r] = _mm512_setzero_si512();
    for (int j = 0; j < kSub; ++j) {
      const int64_t e0 = 256 * i + j * (256 / kSub);
      const __m512i init =
          kQ6 ? _mm512_loadu_si512(xx + (kSub * i + j) * kL) : _mm512_setzero_si512();
      __m512i ia[kQ512Rows];
      for (int r = 0; r < kQ512Rows; ++r) ia[r] = init;
      for (int s = 0; s < kSteps; ++s) {
        const __m512i xv = _mm512_loadu_si512(xq + (e0 + 4 * s) * kL);
        for (int r = 0; r < kQ512Rows; ++r) {
          ia[r] = _mm512_dpbusd_epi32(ia[r], _mm512_set1_epi32(ld4(rows[r].q + e0 + 4 * s)), xv);
        }
      }
      for (int r = 0; r < kQ512Rows; ++r) {
        is[r] = _mm512_add_epi32(
            is[r], _mm512_mullo_epi32(ia[r], _mm512_set1_epi32(rows[r].sc[kSub * i + j])));
      }
    }
    const __m512 ad = _mm512_loadu_ps(xd + kL * i);
    for (int r = 0; r < kQ512Rows; ++r) {
      c[r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(rows[r].d[i]), ad),
                             _mm512_cvtepi32_ps(is[r]), c[r]);
    }
    if constexpr (!kQ6) {
      __m512i ms[kQ512Rows];
      for (int r = 0; r < kQ512Rows; ++r) ms[r] = _mm512_setzero_si512();
      for (int p = 0; p < 4; ++p) {
        const __m512i bs = _mm512_loadu_si512(xx + (4 * i + p) * kL);
        for (int r = 0; r < kQ512Rows; ++r) {
          ms[r] = _mm512_dpwssd_epi32(ms[r], _mm512_set1_epi32(rows[r].mp[4 * i + p]), bs);
        }
      }
      for (int r = 0; r < kQ512Rows; ++r) {
        c[r] = _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_set1_ps(rows[r].dmin[i]), ad),
                                _mm512_cvtepi32_ps(ms[r]), c[r]);
      }
    }
  }
}

template <DType T>
void tile_kq(const Q512Args& a) {
  KRow rows[kQ512Rows];
  const int64_t rs = row_scratch(T, a.K);
  for (int r = 0; r < kQ512Rows; ++r) {
    // A short tile repeats its last row (computed and dropped).
    if (r >= a.rows) {
      rows[r] = rows[a.rows - 1];
      continue;
    }
    rows[r] = k_row(T, a.scratch + r * rs, a.K);
    const uint8_t* w = a.w + r * a.w_stride;
    for (int64_t i = 0; i < a.K / 256; ++i) {
      if constexpr (T == DType::q6_k) {
        decode_q6k(reinterpret_cast<const BlockQ6_K*>(w)[i], i, rows[r]);
      } else if constexpr (T == DType::q5_k) {
        decode_q45k(reinterpret_cast<const BlockQ5_K*>(w)[i], i, rows[r]);
      } else {
        decode_q45k(reinterpret_cast<const BlockQ4_K*>(w)[i], i, rows[r]);
      }
    }
  }
  const int64_t groups = (a.tokens + kL - 1) / kL;
  for (int64_t g = 0; g < groups; ++g) {
    __m512 c[kQ512Rows];
    for (int r = 0; r < kQ512Rows; ++r) c[r] = _mm512_setzero_ps();
    const int64_t bb = T == DType::q6_k   ? int64_t(sizeof(BlockQ6_K))
                       : T == DType::q5_k ? int64_t(sizeof(BlockQ5_K))
                                          : int64_t(sizeof(BlockQ4_K));
    kq_group<T == DType::q6_k>(a, bb, g == 0, rows, a.act + g * a.group_bytes, a.K, c);
    for (int r = 0; r < a.rows; ++r) store_row(a, g, r, c[r]);
  }
}

// ---- Q8_0: activations offset to unsigned bytes, the offset taken back
// through -128 * (sum of the weight block). ----
inline int32_t q8_neg_sum(const BlockQ8_0& b) {
  // sad of (q + 128) against zero: four partial sums of unsigned bytes.
  const __m256i u = _mm256_xor_si256(ld32(b.qs), _mm256_set1_epi8(char(0x80)));
  const __m256i s = _mm256_sad_epu8(u, _mm256_setzero_si256());
  __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  h = _mm_add_epi64(h, _mm_unpackhi_epi64(h, h));
  return -128 * (_mm_cvtsi128_si32(h) - 32 * 128);
}

void tile_q8_0(const Q512Args& a) {
  const int64_t nb = a.K / 32, rs = row_scratch(DType::q8_0, a.K);
  const BlockQ8_0* blk[kQ512Rows];
  const int32_t* ns[kQ512Rows];
  const float* dw[kQ512Rows];
  for (int r = 0; r < kQ512Rows; ++r) {
    const int rr = std::min(r, a.rows - 1);
    blk[r] = reinterpret_cast<const BlockQ8_0*>(a.w + rr * a.w_stride);
    auto* n = reinterpret_cast<int32_t*>(a.scratch + rr * rs);
    auto* d = reinterpret_cast<float*>(n + nb);
    ns[r] = n;
    dw[r] = d;
    if (r != rr) continue;
    for (int64_t b = 0; b < nb; ++b) {
      n[b] = q8_neg_sum(blk[r][b]);
      d[b] = h2f(blk[r][b].d);
    }
  }
  const int64_t groups = (a.tokens + kL - 1) / kL;
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* xq = a.act + g * a.group_bytes;
    const auto* xd = reinterpret_cast<const float*>(xq + a.K * kL);
    // lanes[k][r]: the accumulator of blocks b = k mod 8, as the AVX2 kernel.
    alignas(64) float lanes[8][kQ512Rows][kL];
    for (int k = 0; k < 8; ++k) {
      __m512 c[kQ512Rows];
      for (int r = 0; r < kQ512Rows; ++r) c[r] = _mm512_setzero_ps();
      for (int64_t b = k; b < nb; b += 8) {
        __m512i ia[kQ512Rows];
        for (int r = 0; r < kQ512Rows; ++r) ia[r] = _mm512_set1_epi32(ns[r][b]);
        for (int s = 0; s < 8; ++s) {
          const __m512i xv = _mm512_loadu_si512(xq + (8 * b + s) * kL * 4);
          for (int r = 0; r < kQ512Rows; ++r) {
            ia[r] = _mm512_dpbusd_epi32(ia[r], xv, _mm512_set1_epi32(ld4(blk[r][b].qs + 4 * s)));
          }
        }
        if (g == 0) prefetch_next(a, b * 34, b * 34 + 34);
        const __m512 ad = _mm512_loadu_ps(xd + kL * b);
        for (int r = 0; r < kQ512Rows; ++r) {
          c[r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(dw[r][b]), ad),
                                 _mm512_cvtepi32_ps(ia[r]), c[r]);
        }
      }
      for (int r = 0; r < kQ512Rows; ++r) _mm512_store_ps(lanes[k][r], c[r]);
    }
    for (int r = 0; r < a.rows; ++r) {
      auto L = [&](int k) { return _mm512_load_ps(lanes[k][r]); };
      // hsum's order: ((c0 + c4) + (c2 + c6)) + ((c1 + c5) + (c3 + c7)).
      const __m512 s0 = _mm512_add_ps(_mm512_add_ps(L(0), L(4)), _mm512_add_ps(L(2), L(6)));
      const __m512 s1 = _mm512_add_ps(_mm512_add_ps(L(1), L(5)), _mm512_add_ps(L(3), L(7)));
      store_row(a, g, r, _mm512_add_ps(s0, s1));
    }
  }
}

Q512Fn q512_table(DType t) {
  switch (t) {
    case DType::q8_0:
      return tile_q8_0;
    case DType::q4_k:
      return tile_kq<DType::q4_k>;
    case DType::q5_k:
      return tile_kq<DType::q5_k>;
    case DType::q6_k:
      return tile_kq<DType::q6_k>;
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
Q512Fn q512_table(DType) { return nullptr; }
}  // namespace
}  // namespace rc::kernels

#endif

namespace rc::kernels {

Q512Fn q512_fn(DType t) {
  if (!cpu_has_vnni()) return nullptr;
  return float_type(t) ? h512_table(t) : q512_table(t);
}

}  // namespace rc::kernels
