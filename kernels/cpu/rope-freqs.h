// Rotation frequencies of RoPE, shared by every backend so the model's
// positions mean the same thing everywhere (computed in double; this is not a
// hot path: n_rot / 2 values per call).
#pragma once

#include <vector>

#include "backend.h"

namespace rc::kernels {

// freq[j] for pair j < n_rot / 2: theta_j = pos * freq[j]. Base frequency
// freq_base^(-2j / n_rot), then, when cfg.llama3_factor != 0, Llama 3.1's
// wavelength-dependent scaling (Meta's apply_scaling): wavelengths shorter
// than original_context / high_freq_factor are kept, longer than
// original_context / low_freq_factor are divided by factor, and the band in
// between is interpolated linearly in original_context / wavelength.
std::vector<double> rope_freqs(const RopeConfig& cfg);

}  // namespace rc::kernels
