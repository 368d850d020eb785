#include "device-select.h"

#include <thread>

#ifdef RADIXCHAT_HAVE_CUDA
#include "cuda/device-query.cuh"
#endif

namespace rc::kernels {

bool cuda_compiled_in() {
#ifdef RADIXCHAT_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

static DeviceChoice cpu_choice(std::string reason) {
  unsigned threads = std::thread::hardware_concurrency();
  return {DeviceKind::cpu, "CPU (" + std::to_string(threads ? threads : 1) + " threads)",
          std::move(reason)};
}

DeviceChoice select_device(const std::string& requested) {
  if (requested == "cpu") return cpu_choice("CPU requested");
#ifdef RADIXCHAT_HAVE_CUDA
  cuda::DeviceQuery q = cuda::query_first_device();
  if (q.usable) {
    return {DeviceKind::cuda, q.name,
            requested == "cuda" ? "CUDA requested" : "CUDA device found"};
  }
  return cpu_choice(q.reason);
#else
  return cpu_choice(requested == "cuda" ? "CUDA requested, but this build has no CUDA backend"
                                        : "this build has no CUDA backend");
#endif
}

}  // namespace rc::kernels
