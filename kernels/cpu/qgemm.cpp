// Dispatch and per-token side data of the qgemm.h tile kernels.
#include "qgemm.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "quant-blocks.h"

namespace rc::kernels {

namespace {

int64_t q32_side_floats(int64_t K) { return 8 * ((K / 32 + 7) / 8); }

std::atomic<QTileMode>& mode_flag() {
  static std::atomic<QTileMode> mode{[] {
    const char* env = std::getenv("RADIXCHAT_CPU_QGEMM");
    if (env && std::strcmp(env, "off") == 0) return QTileMode::off;
    if (env && std::strcmp(env, "avx2") == 0) return QTileMode::avx2;
    return QTileMode::best;
  }()};
  return mode;
}

}  // namespace

int64_t qtile_side_bytes(DType t, int64_t K) {
  switch (t) {
    case DType::q8_0:
    case DType::q4_0:
    case DType::q5_0:
    case DType::q5_1:
      // Block scales, then Q4_0's 8 / Q5_0's 16 * (sum of the block's bytes)
      // as int32 or Q5_1's scale * sum as float, zero-padded to whole groups
      // of eight blocks.
      return 2 * q32_side_floats(K) * 4;
    default:
      return 0;
  }
}

void qtile_prepare_side(DType t, const void* act_row, int64_t K, void* side) {
  switch (t) {
    case DType::q8_0:
    case DType::q4_0:
    case DType::q5_0:
    case DType::q5_1: {
      const auto* a = static_cast<const BlockQ8A*>(act_row);
      const int64_t nb = K / 32, nf = q32_side_floats(K);
      auto* d = static_cast<float*>(side);
      auto* off = reinterpret_cast<int32_t*>(d + nf);
      auto* dsum = d + nf;
      const int32_t scale = t == DType::q4_0 ? 8 : 16;
      for (int64_t b = 0; b < nf; ++b) {
        const int32_t sum = b < nb ? int32_t(a[b].sum[0]) + a[b].sum[1] : 0;
        d[b] = b < nb ? a[b].d : 0.0f;
        if (t == DType::q5_1) {
          dsum[b] = d[b] * float(sum);
        } else {
          off[b] = scale * sum;
        }
      }
      return;
    }
    default:
      return;
  }
}

bool cpu_has_vnni() {
  static const bool has = [] {
    const char* env = std::getenv("RADIXCHAT_CPU_VNNI");
    if (env && std::strcmp(env, "0") == 0) return false;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
#else
    return false;
#endif
  }();
  return has;
}

void set_qtile_mode(QTileMode m) { mode_flag().store(m); }
QTileMode qtile_mode() { return mode_flag().load(); }

QTileFn qtile_fn(DType t, SimdLevel level) {
  const QTileMode mode = qtile_mode();
  if (level != SimdLevel::avx2 || mode == QTileMode::off) return nullptr;
  if (QTileFn f = htile_avx2(t)) return f;
  if (mode == QTileMode::best && cpu_has_vnni()) {
    if (QTileFn f = qtile_vnni(t)) return f;
  }
  return qtile_avx2(t);
}

}  // namespace rc::kernels
