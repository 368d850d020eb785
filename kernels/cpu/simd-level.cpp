#include "simd-level.h"

#include <cstdlib>
#include <cstring>

namespace rc::kernels {

SimdLevel best_simd_level() {
  const char* forced = std::getenv("RADIXCHAT_CPU_SIMD");
  if (forced && std::strcmp(forced, "scalar") == 0) return SimdLevel::scalar;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c")) {
    return SimdLevel::avx2;
  }
#endif
  return SimdLevel::scalar;
}

const char* simd_level_name(SimdLevel level) {
  return level == SimdLevel::avx2 ? "avx2" : "scalar";
}

}  // namespace rc::kernels
