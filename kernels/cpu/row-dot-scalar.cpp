// Portable dot kernels: the same integer arithmetic as the SIMD ones, so
// every level gives the same answer up to fp32 summation order.
#include <type_traits>

#include "act-quant.h"
#include "fp16.h"
#include "quant-blocks.h"
#include "rc-assert.h"
#include "row-dot.h"

namespace rc::kernels {
namespace {

float dot_f32(const void* w, const void* act, int64_t n) {
  const auto* a = static_cast<const float*>(w);
  const auto* x = static_cast<const float*>(act);
  float s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) s[j] += a[i + j] * x[i + j];
  }
  for (; i < n; ++i) s[0] += a[i] * x[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

template <float (*Convert)(uint16_t)>
float dot_half(const void* w, const void* act, int64_t n) {
  const auto* a = static_cast<const uint16_t*>(w);
  const auto* x = static_cast<const float*>(act);
  float s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) s[j] += Convert(a[i + j]) * x[i + j];
  }
  for (; i < n; ++i) s[0] += Convert(a[i]) * x[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

float dot_q8_0(const void* w, const void* act, int64_t n) {
  const auto* b = static_cast<const BlockQ8_0*>(w);
  const auto* a = static_cast<const BlockQ8A*>(act);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int isum = 0;
    for (int j = 0; j < kQK; ++j) isum += int(b[i].qs[j]) * int(a[i].qs[j]);
    sum += float(isum) * (fp16_to_f32(b[i].d) * a[i].d);
  }
  return sum;
}

float dot_q4_0(const void* w, const void* act, int64_t n) {
  const auto* b = static_cast<const BlockQ4_0*>(w);
  const auto* a = static_cast<const BlockQ8A*>(act);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int isum = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      isum += ((b[i].qs[j] & 0xf) - 8) * int(a[i].qs[j]);
      isum += ((b[i].qs[j] >> 4) - 8) * int(a[i].qs[j + kQK / 2]);
    }
    sum += float(isum) * (fp16_to_f32(b[i].d) * a[i].d);
  }
  return sum;
}

// The 5-bit quants of a Q5_0 / Q5_1 block (0..31) in element order.
void q5_unpack(const uint8_t qh[4], const uint8_t qs[kQK / 2], int q[kQK]) {
  const uint32_t h =
      uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
  for (int j = 0; j < kQK / 2; ++j) {
    q[j] = (qs[j] & 0xf) | int(((h >> j) & 1) << 4);
    q[j + kQK / 2] = (qs[j] >> 4) | int(((h >> (j + kQK / 2)) & 1) << 4);
  }
}

// Q5_0 (x = d (q - 16)) and Q5_1 (x = d q + m, the min times the
// activation block's sum).
template <class Block>
float dot_q5(const void* w, const void* act, int64_t n) {
  constexpr bool kMin = std::is_same_v<Block, BlockQ5_1>;
  const auto* b = static_cast<const Block*>(w);
  const auto* a = static_cast<const BlockQ8A*>(act);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int q[kQK], isum = 0;
    q5_unpack(b[i].qh, b[i].qs, q);
    for (int j = 0; j < kQK; ++j) isum += (kMin ? q[j] : q[j] - 16) * int(a[i].qs[j]);
    sum += float(isum) * (fp16_to_f32(b[i].d) * a[i].d);
    if constexpr (kMin) {
      sum += float(a[i].sum[0] + a[i].sum[1]) * (fp16_to_f32(b[i].m) * a[i].d);
    }
  }
  return sum;
}

// Q4_K / Q5_K x Q8K: integer sums per sub-block, mins from the block sums.
template <class Block>
float dot_k_affine(const void* w, const void* act, int64_t n) {
  const auto* b = static_cast<const Block*>(w);
  const auto* a = static_cast<const BlockQ8K*>(act);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQKK; ++i) {
    int isum = 0, msum = 0;
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      q4k_scale_min(j, b[i].scales, &sc, &m);
      const uint8_t* q = b[i].qs + 32 * (j / 2);
      const int shift = (j & 1) * 4;
      int dot = 0;
      for (int l = 0; l < 32; ++l) {
        const int v = ((q[l] >> shift) & 0xf) | k_high_bit(b[i], j, l);
        dot += v * int(a[i].qs[32 * j + l]);
      }
      isum += int(sc) * dot;
      msum += int(m) * int(a[i].bsum[j]);
    }
    sum +=
        fp16_to_f32(b[i].d) * a[i].d * float(isum) - fp16_to_f32(b[i].dmin) * a[i].d * float(msum);
  }
  return sum;
}

float dot_q6_k(const void* w, const void* act, int64_t n) {
  const auto* b = static_cast<const BlockQ6_K*>(w);
  const auto* a = static_cast<const BlockQ8K*>(act);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQKK; ++i) {
    int isum = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = b[i].ql + 64 * half;
      const uint8_t* qh = b[i].qh + 32 * half;
      for (int quarter = 0; quarter < 4; ++quarter) {
        for (int l = 0; l < 32; ++l) {
          const int e = 128 * half + 32 * quarter + l;
          const uint8_t lo_byte = ql[l + 32 * (quarter & 1)];
          const int lo = quarter < 2 ? (lo_byte & 0xf) : (lo_byte >> 4);
          const int q = lo | (((qh[l] >> (2 * quarter)) & 3) << 4);
          isum += int(b[i].scales[e / 16]) * (q - 32) * int(a[i].qs[e]);
        }
      }
    }
    sum += fp16_to_f32(b[i].d) * a[i].d * float(isum);
  }
  return sum;
}

}  // namespace

RowDotFn row_dot_scalar(DType t) {
  switch (t) {
    case DType::f32:
      return dot_f32;
    case DType::f16:
      return dot_half<fp16_to_f32>;
    case DType::bf16:
      return dot_half<bf16_to_f32>;
    case DType::q8_0:
      return dot_q8_0;
    case DType::q4_0:
      return dot_q4_0;
    case DType::q5_0:
      return dot_q5<BlockQ5_0>;
    case DType::q5_1:
      return dot_q5<BlockQ5_1>;
    case DType::q5_k:
      return dot_k_affine<BlockQ5_K>;
    case DType::q4_k:
      return dot_k_affine<BlockQ4_K>;
    case DType::q6_k:
      return dot_q6_k;
  }
  RC_ASSERT_MSG(false, "unknown DType");
}

RowDotFn row_dot_fn(DType t, SimdLevel level) {
  return level == SimdLevel::avx2 ? row_dot_avx2(t) : row_dot_scalar(t);
}

}  // namespace rc::kernels
