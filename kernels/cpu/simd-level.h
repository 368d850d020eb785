// Which instruction set the fast CPU kernels use, decided at run time so one
// binary runs on any x86-64 (and builds on other architectures, scalar only).
#pragma once

namespace rc::kernels {

enum class SimdLevel {
  scalar,  // portable C++, any CPU
  avx2,    // AVX2 + FMA + F16C (Haswell, Zen and later)
};

// The best level this CPU supports. RADIXCHAT_CPU_SIMD=scalar in the
// environment forces the portable kernels (for comparing paths).
SimdLevel best_simd_level();
const char* simd_level_name(SimdLevel level);

}  // namespace rc::kernels
