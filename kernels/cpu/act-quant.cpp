#include "act-quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "rc-assert.h"

namespace rc::kernels {
namespace {

// Scale and quants of one block of `len` values; returns d.
float quantize_block(const float* x, int len, int8_t* qs) {
  float amax = 0.0f;
  for (int j = 0; j < len; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int j = 0; j < len; ++j) {
    qs[j] = int8_t(std::clamp(int(std::nearbyint(x[j] * id)), -127, 127));
  }
  return amax / 127.0f;
}

int sum_of(const int8_t* q, int len) {
  int s = 0;
  for (int j = 0; j < len; ++j) s += q[j];
  return s;
}

}  // namespace

ActFormat act_format(DType t) {
  switch (t) {
    case DType::q4_0:
    case DType::q5_0:
    case DType::q5_1:
    case DType::q8_0:
      return ActFormat::q8_32;
    case DType::q4_k:
    case DType::q5_k:
    case DType::q6_k:
      return ActFormat::q8_256;
    default:
      return ActFormat::f32;
  }
}

int64_t act_row_bytes(ActFormat f, int64_t n) {
  switch (f) {
    case ActFormat::f32:
      return n * int64_t(sizeof(float));
    case ActFormat::q8_32:
      RC_ASSERT(n % 32 == 0);
      return n / 32 * int64_t(sizeof(BlockQ8A));
    case ActFormat::q8_256:
      RC_ASSERT(n % 256 == 0);
      return n / 256 * int64_t(sizeof(BlockQ8K));
  }
  RC_ASSERT_MSG(false, "unknown ActFormat");
}

void quantize_act(ActFormat f, const float* x, void* dst, int64_t n) {
  switch (f) {
    case ActFormat::f32:
      std::memcpy(dst, x, size_t(n) * sizeof(float));
      return;
    case ActFormat::q8_32: {
      RC_ASSERT(n % 32 == 0);
      auto* y = static_cast<BlockQ8A*>(dst);
      for (int64_t b = 0; b < n / 32; ++b, x += 32) {
        y[b].d = quantize_block(x, 32, y[b].qs);
        y[b].sum[0] = int16_t(sum_of(y[b].qs, 16));
        y[b].sum[1] = int16_t(sum_of(y[b].qs + 16, 16));
      }
      return;
    }
    case ActFormat::q8_256: {
      RC_ASSERT(n % 256 == 0);
      auto* y = static_cast<BlockQ8K*>(dst);
      for (int64_t b = 0; b < n / 256; ++b, x += 256) {
        y[b].d = quantize_block(x, 256, y[b].qs);
        for (int i = 0; i < 16; ++i) y[b].sum16[i] = int16_t(sum_of(y[b].qs + 16 * i, 16));
        for (int i = 0; i < 8; ++i)
          y[b].bsum[i] = int16_t(y[b].sum16[2 * i] + y[b].sum16[2 * i + 1]);
      }
      return;
    }
  }
}

QuantizeActFn quantize_act_fn(SimdLevel level) {
  return level == SimdLevel::avx2 ? quantize_act_avx2 : quantize_act;
}

void dequantize_act(ActFormat f, const void* src, float* y, int64_t n) {
  switch (f) {
    case ActFormat::f32:
      std::memcpy(y, src, size_t(n) * sizeof(float));
      return;
    case ActFormat::q8_32: {
      const auto* x = static_cast<const BlockQ8A*>(src);
      for (int64_t i = 0; i < n; ++i) y[i] = x[i / 32].d * float(x[i / 32].qs[i % 32]);
      return;
    }
    case ActFormat::q8_256: {
      const auto* x = static_cast<const BlockQ8K*>(src);
      for (int64_t i = 0; i < n; ++i) y[i] = x[i / 256].d * float(x[i / 256].qs[i % 256]);
      return;
    }
  }
}

}  // namespace rc::kernels
