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

void dequant_q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = d * float(b[i].qs[j]);
  }
}

void dequant_q4_k(const BlockQ4_K* b, float* y, int64_t nb) {
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
      for (int l = 0; l < 32; ++l) y[l] = scale * float((q[l] >> shift) & 0xf) - min;
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

void quant_q4_0(const float* x, BlockQ4_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    b[i].d = f32_to_fp16(signed_absmax(x, kQK) / -8.0f);
    const float d = fp16_to_f32(b[i].d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = uint8_t(std::clamp(nearest(x[j] * id) + 8, 0, 15));
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

void quant_q4_k(const float* x, BlockQ4_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    // Per sub-block affine range [-min, 15 * scale - min] with min >= 0.
    float scale[8], min[8], max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 8; ++j) {
      float lo = 0.0f, hi = -INFINITY;
      for (int l = 0; l < 32; ++l) {
        lo = std::min(lo, x[32 * j + l]);
        hi = std::max(hi, x[32 * j + l]);
      }
      scale[j] = std::max(hi - lo, 0.0f) / 15.0f;
      min[j] = -lo;
      max_scale = std::max(max_scale, scale[j]);
      max_min = std::max(max_min, min[j]);
    }
    BlockQ4_K& o = b[i];
    o.d = f32_to_fp16(max_scale / 63.0f);
    o.dmin = f32_to_fp16(max_min / 63.0f);
    const float d = fp16_to_f32(o.d), dmin = fp16_to_f32(o.dmin);
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = uint8_t(d > 0.0f ? std::clamp(nearest(scale[j] / d), 0, 63) : 0);
      m[j] = uint8_t(dmin > 0.0f ? std::clamp(nearest(min[j] / dmin), 0, 63) : 0);
    }
    std::memset(o.scales, 0, sizeof(o.scales));
    for (int j = 0; j < 8; ++j) {
      if (j < 4) {
        o.scales[j] = sc[j];
        o.scales[j + 4] = m[j];
      } else {
        o.scales[j + 4] = uint8_t((sc[j] & 0xf) | ((m[j] & 0xf) << 4));
        o.scales[j - 4] |= uint8_t((sc[j] >> 4) << 6);
        o.scales[j] |= uint8_t((m[j] >> 4) << 6);
      }
    }
    // Quantize against the stored (rounded) scales so the error bound holds
    // for what is actually decoded.
    for (int j = 0; j < 8; ++j) {
      const float es = d * float(sc[j]), em = dmin * float(m[j]);
      const float ies = es > 0.0f ? 1.0f / es : 0.0f;
      uint8_t* q = o.qs + 32 * (j / 2);
      for (int l = 0; l < 32; ++l) {
        const int v = std::clamp(nearest((x[32 * j + l] + em) * ies), 0, 15);
        if (j % 2 == 0) {
          q[l] = uint8_t(v);
        } else {
          q[l] = uint8_t(q[l] | (v << 4));
        }
      }
    }
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
    case DType::q8_0:
      return dequant_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
    case DType::q4_k:
      return dequant_q4_k(static_cast<const BlockQ4_K*>(src), dst, nb);
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
