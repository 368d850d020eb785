#include "rope-freqs.h"

#include <cmath>
#include <numbers>

#include "rc-assert.h"

namespace rc::kernels {

std::vector<double> rope_freqs(const RopeConfig& cfg) {
  RC_ASSERT(cfg.n_rot > 0 && cfg.n_rot % 2 == 0);
  std::vector<double> f(size_t(cfg.n_rot / 2));
  for (int j = 0; j < cfg.n_rot / 2; ++j) {
    double freq = std::pow(double(cfg.freq_base), -2.0 * j / cfg.n_rot);
    if (cfg.llama3_factor != 0.0f) {
      const double factor = cfg.llama3_factor;
      const double lo = cfg.llama3_low_freq_factor, hi = cfg.llama3_high_freq_factor;
      const double orig = cfg.llama3_original_context;
      const double wavelen = 2.0 * std::numbers::pi / freq;
      if (wavelen < orig / hi) {
        // high frequency: unchanged
      } else if (wavelen > orig / lo) {
        freq /= factor;
      } else {
        const double smooth = (orig / wavelen - lo) / (hi - lo);
        freq = (1.0 - smooth) * freq / factor + smooth * freq;
      }
    }
    f[size_t(j)] = freq;
  }
  return f;
}

}  // namespace rc::kernels
