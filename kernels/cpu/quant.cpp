#include "quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "fp16.h"
#include "quant-blocks.h"
#include "rc-assert.h"

namespace rc::kernels {
namespace {

int nearest(float v) { return int(std::lrintf(v)); }

// ---- dequantize --------------------------------------------------------------

void dequant_q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = d * float((b[i].qs[j] & 0xf) - 8);
      y[j + kQK / 2] = d * float((b[i].qs[j] >> 4) - 8);
    }
  }
}

// The 5-bit quant of element j (0..31) of a Q5_0 / Q5_1 block, as 0..31.
int q5_quant(const uint8_t* qh, const uint8_t* qs, int j) {
  uint32_t h;
  std::memcpy(&h, qh, 4);
  const int lo = j < kQK / 2 ? (qs[j] & 0xf) : (qs[j - kQK / 2] >> 4);
  return lo | int(((h >> j) & 1) << 4);
}

void pack_q5(const uint8_t q[kQK], uint8_t qh[4], uint8_t qs[kQK / 2]) {
  uint32_t h = 0;
  for (int j = 0; j < kQK; ++j) h |= uint32_t(q[j] >> 4) << j;
  std::memcpy(qh, &h, 4);
  for (int j = 0; j < kQK / 2; ++j) qs[j] = uint8_t((q[j] & 0xf) | ((q[j + kQK / 2] & 0xf) << 4));
}

void dequant_q5_0(const BlockQ5_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = d * float(q5_quant(b[i].qh, b[i].qs, j) - 16);
  }
}

void dequant_q5_1(const BlockQ5_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
    for (int j = 0; j < kQK; ++j) y[j] = d * float(q5_quant(b[i].qh, b[i].qs, j)) + m;
  }
}

void dequant_q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = d * float(b[i].qs[j]);
  }
}

// Q4_K and Q5_K: x = d * sc[j] * q - dmin * m[j] per sub-block j.
template <class Block>
void dequant_k_affine(const Block* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_f32(b[i].d);
    const float dmin = fp16_to_f32(b[i].dmin);
    for (int j = 0; j < 8; ++j, y += 32) {
      uint8_t sc, m;
      q4k_scale_min(j, b[i].scales, &sc, &m);
      const float scale = d * float(sc);
      const float min = dmin * float(m);
      const uint8_t* q = b[i].qs + 32 * (j / 2);
      const int shift = (j & 1) * 4;
      for (int l = 0; l < 32; ++l) {
        y[l] = scale * float(((q[l] >> shift) & 0xf) | k_high_bit(b[i], j, l)) - min;
      }
    }
  }
}

// The 6-bit quant of element e (0..255) of a Q6_K block, as 0..63.
int q6k_quant(const BlockQ6_K& b, int e) {
  const int half = e / 128, r = e % 128, quarter = r / 32, l = r % 32;
  const uint8_t* ql = b.ql + 64 * half;
  const uint8_t* qh = b.qh + 32 * half;
  const uint8_t lo_byte = ql[l + 32 * (quarter & 1)];
  const int lo = quarter < 2 ? (lo_byte & 0xf) : (lo_byte >> 4);
  const int hi = (qh[l] >> (2 * quarter)) & 3;
  return lo | (hi << 4);
}

void dequant_q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQKK) {
    const float d = fp16_to_f32(b[i].d);
    for (int e = 0; e < kQKK; ++e) {
      y[e] = d * float(b[i].scales[e / 16]) * float(q6k_quant(b[i], e) - 32);
    }
  }
}

// ---- quantize ----------------------------------------------------------------

// The scale of a symmetric block: the element of largest magnitude maps to
// `-levels` exactly (as GGML does), so the opposite sign gets one level less.
float signed_absmax(const float* x, int n) {
  float amax = 0.0f, vmax = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      vmax = x[j];
    }
  }
  return vmax;
}

// Symmetric codes of one block: the largest magnitude maps to -`half`, codes
// are offset by `half` into [0, 2*half). Returns the block's fp16 scale.
uint16_t symmetric_codes(const float* x, int half, uint8_t* q) {
  const uint16_t d16 = f32_to_fp16(signed_absmax(x, kQK) / float(-half));
  const float d = fp16_to_f32(d16);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kQK; ++j)
    q[j] = uint8_t(std::clamp(nearest(x[j] * id) + half, 0, 2 * half - 1));
  return d16;
}

void quant_q4_0(const float* x, BlockQ4_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    uint8_t q[kQK];
    b[i].d = symmetric_codes(x, 8, q);
    for (int j = 0; j < kQK / 2; ++j) b[i].qs[j] = uint8_t(q[j] | (q[j + kQK / 2] << 4));
  }
}

void quant_q8_0(const float* x, BlockQ8_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    b[i].d = f32_to_fp16(amax / 127.0f);
    const float d = fp16_to_f32(b[i].d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < kQK; ++j) b[i].qs[j] = int8_t(std::clamp(nearest(x[j] * id), -127, 127));
  }
}

// Packs eight 6-bit scales and mins as q4k_scale_min reads them.
void pack_k_scales(const uint8_t sc[8], const uint8_t m[8], uint8_t out[12]) {
  std::memset(out, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      out[j] = sc[j];
      out[j + 4] = m[j];
    } else {
      out[j + 4] = uint8_t((sc[j] & 0xf) | ((m[j] & 0xf) << 4));
      out[j - 4] |= uint8_t((sc[j] >> 4) << 6);
      out[j] |= uint8_t((m[j] >> 4) << 6);
    }
  }
}

// The affine K-quant super-block shared by Q4_K (levels 15) and Q5_K (31):
// per sub-block range [-min, levels * scale - min] with min >= 0, 6-bit
// scales and mins under fp16 d / dmin. Writes the packed scales and q[256]
// (0..levels), quantized against the stored (rounded) scales so the error
// bound holds for what is actually decoded.
void quant_k_affine(const float* x, int levels, uint16_t* d_out, uint16_t* dmin_out,
                    uint8_t scales[12], uint8_t q[kQKK]) {
  float scale[8], min[8], max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    float lo = 0.0f, hi = -INFINITY;
    for (int l = 0; l < 32; ++l) {
      lo = std::min(lo, x[32 * j + l]);
      hi = std::max(hi, x[32 * j + l]);
    }
    scale[j] = std::max(hi - lo, 0.0f) / float(levels);
    min[j] = -lo;
    max_scale = std::max(max_scale, scale[j]);
    max_min = std::max(max_min, min[j]);
  }
  *d_out = f32_to_fp16(max_scale / 63.0f);
  *dmin_out = f32_to_fp16(max_min / 63.0f);
  const float d = fp16_to_f32(*d_out), dmin = fp16_to_f32(*dmin_out);
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = uint8_t(d > 0.0f ? std::clamp(nearest(scale[j] / d), 0, 63) : 0);
    m[j] = uint8_t(dmin > 0.0f ? std::clamp(nearest(min[j] / dmin), 0, 63) : 0);
  }
  pack_k_scales(sc, m, scales);
  for (int j = 0; j < 8; ++j) {
    const float es = d * float(sc[j]), em = dmin * float(m[j]);
    const float ies = es > 0.0f ? 1.0f / es : 0.0f;
    for (int l = 0; l < 32; ++l) {
      q[32 * j + l] = uint8_t(std::clamp(nearest((x[32 * j + l] + em) * ies), 0, levels));
    }
  }
}

void quant_q4_k(const float* x, BlockQ4_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    uint8_t q[kQKK];
    quant_k_affine(x, 15, &b[i].d, &b[i].dmin, b[i].scales, q);
    for (int p = 0; p < 4; ++p) {
      for (int l = 0; l < 32; ++l) {
        b[i].qs[32 * p + l] = uint8_t(q[64 * p + l] | (q[64 * p + 32 + l] << 4));
      }
    }
  }
}

void quant_q5_k(const float* x, BlockQ5_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    uint8_t q[kQKK];
    quant_k_affine(x, 31, &b[i].d, &b[i].dmin, b[i].scales, q);
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int p = 0; p < 4; ++p) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t lo = q[64 * p + l], hi = q[64 * p + 32 + l];
        b[i].qs[32 * p + l] = uint8_t((lo & 0xf) | ((hi & 0xf) << 4));
        b[i].qh[l] |= uint8_t(((lo >> 4) << (2 * p)) | ((hi >> 4) << (2 * p + 1)));
      }
    }
  }
}

// Symmetric 5-bit blocks: the largest magnitude maps to -16 (as Q4_0 to -8).
void quant_q5_0(const float* x, BlockQ5_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    uint8_t q[kQK];
    b[i].d = symmetric_codes(x, 16, q);
    pack_q5(q, b[i].qh, b[i].qs);
  }
}

// Affine 5-bit blocks: min -> 0, max -> 31, against the stored fp16 d and m.
void quant_q5_1(const float* x, BlockQ5_1* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float lo = x[0], hi = x[0];
    for (int j = 1; j < kQK; ++j) lo = std::min(lo, x[j]), hi = std::max(hi, x[j]);
    b[i].d = f32_to_fp16((hi - lo) / 31.0f);
    b[i].m = f32_to_fp16(lo);
    const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = uint8_t(std::clamp(nearest((x[j] - m) * id), 0, 31));
    pack_q5(q, b[i].qh, b[i].qs);
  }
}

void quant_q6_k(const float* x, BlockQ6_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    float scale[16], vmax = 0.0f;
    for (int j = 0; j < 16; ++j) {
      scale[j] = signed_absmax(x + 16 * j, 16) / -32.0f;
      if (std::fabs(scale[j]) > std::fabs(vmax)) vmax = scale[j];
    }
    BlockQ6_K& o = b[i];
    o.d = f32_to_fp16(vmax / 127.0f);
    const float d = fp16_to_f32(o.d);
    uint8_t L[kQKK];
    for (int j = 0; j < 16; ++j) {
      const int sc = d != 0.0f ? std::clamp(nearest(scale[j] / d), -127, 127) : 0;
      o.scales[j] = int8_t(sc);
      const float es = d * float(sc);
      const float ies = es != 0.0f ? 1.0f / es : 0.0f;
      for (int l = 0; l < 16; ++l) {
        L[16 * j + l] = uint8_t(std::clamp(nearest(x[16 * j + l] * ies), -32, 31) + 32);
      }
    }
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = L + 128 * half;
      uint8_t* ql = o.ql + 64 * half;
      uint8_t* qh = o.qh + 32 * half;
      for (int l = 0; l < 32; ++l) {
        ql[l] = uint8_t((q[l] & 0xf) | ((q[l + 64] & 0xf) << 4));
        ql[l + 32] = uint8_t((q[l + 32] & 0xf) | ((q[l + 96] & 0xf) << 4));
        qh[l] = uint8_t((q[l] >> 4) | ((q[l + 32] >> 4) << 2) | ((q[l + 64] >> 4) << 4) |
                        ((q[l + 96] >> 4) << 6));
      }
    }
  }
}

}  // namespace

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
  const int64_t nb = n / block_elems(t);
  RC_ASSERT(nb * block_elems(t) == n);
  switch (t) {
    case DType::f32:
      std::memcpy(dst, src, size_t(n) * 4);
      return;
    case DType::f16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(s[i]);
      return;
    }
    case DType::bf16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
      return;
    }
    case DType::q4_0:
      return dequant_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case DType::q5_0:
      return dequant_q5_0(static_cast<const BlockQ5_0*>(src), dst, nb);
    case DType::q5_1:
      return dequant_q5_1(static_cast<const BlockQ5_1*>(src), dst, nb);
    case DType::q5_k:
      return dequant_k_affine(static_cast<const BlockQ5_K*>(src), dst, nb);
    case DType::q8_0:
      return dequant_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
    case DType::q4_k:
      return dequant_k_affine(static_cast<const BlockQ4_K*>(src), dst, nb);
    case DType::q6_k:
      return dequant_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb);
  }
  RC_ASSERT_MSG(false, "unknown DType");
}

void quantize_row(DType t, const float* src, void* dst, int64_t n) {
  const int64_t nb = n / block_elems(t);
  RC_ASSERT(nb * block_elems(t) == n);
  switch (t) {
    case DType::f32:
      std::memcpy(dst, src, size_t(n) * 4);
      return;
    case DType::f16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = f32_to_fp16(src[i]);
      return;
    }
    case DType::bf16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]);
      return;
    }
    case DType::q4_0:
      return quant_q4_0(src, static_cast<BlockQ4_0*>(dst), nb);
    case DType::q5_0:
      return quant_q5_0(src, static_cast<BlockQ5_0*>(dst), nb);
    case DType::q5_1:
      return quant_q5_1(src, static_cast<BlockQ5_1*>(dst), nb);
    case DType::q5_k:
      return quant_q5_k(src, static_cast<BlockQ5_K*>(dst), nb);
    case DType::q8_0:
      return quant_q8_0(src, static_cast<BlockQ8_0*>(dst), nb);
    case DType::q4_k:
      return quant_q4_k(src, static_cast<BlockQ4_K*>(dst), nb);
    case DType::q6_k:
      return quant_q6_k(src, static_cast<BlockQ6_K*>(dst), nb);
  }
  RC_ASSERT_MSG(false, "unknown DType");
}

}  // namespace rc::kernels
