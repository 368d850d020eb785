#include "act-quant.h"

#include <algorithm>
#include <cmath>

#include "rc-assert.h"

namespace rc::kernels {

void quantize_act_q8(const float* x, BlockQ8A* y, int64_t n) {
  RC_ASSERT(n % 32 == 0);
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 127.0f / amax : 0.0f;
    y[b].d = d;
    int s0 = 0, s1 = 0;
    for (int j = 0; j < 32; ++j) {
      const int q = std::clamp(int(std::nearbyint(x[j] * id)), -127, 127);
      y[b].qs[j] = int8_t(q);
      (j < 16 ? s0 : s1) += q;
    }
    y[b].sum[0] = int16_t(s0);
    y[b].sum[1] = int16_t(s1);
  }
}

void dequantize_act_q8(const BlockQ8A* x, float* y, int64_t n) {
  RC_ASSERT(n % 32 == 0);
  for (int64_t b = 0; b < n / 32; ++b, y += 32) {
    for (int j = 0; j < 32; ++j) y[j] = x[b].d * float(x[b].qs[j]);
  }
}

}  // namespace rc::kernels
