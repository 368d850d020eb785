#include "device-select.h"

#include <algorithm>
#include <thread>

#include "cuda-plugin.h"

namespace rc::kernels {

bool cuda_compiled_in() { return cuda_plugin_status().state != CudaPluginState::not_built; }

static DeviceChoice cpu_choice(std::string reason) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  return {DeviceKind::cpu,
          "CPU (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)"),
          std::move(reason)};
}

DeviceChoice select_device(DeviceRequest requested) {
  if (requested == DeviceRequest::cpu) return cpu_choice("CPU requested");
  const CudaPluginStatus& plugin = cuda_plugin_status();
  if (plugin.state == CudaPluginState::not_built) {
    return cpu_choice(requested == DeviceRequest::cuda
                          ? "CUDA requested, but this build has no CUDA backend"
                          : "this build has no CUDA backend");
  }
  // The plugin's own reasons say whether it is missing, was not opened for
  // want of a GPU, failed to load (a missing cuBLAS) or loaded and found no
  // usable device (driver too old).
  const CudaDeviceAnswer q = query_cuda_device();
  if (q.usable) {
    return {DeviceKind::cuda, q.name,
            requested == DeviceRequest::cuda ? "CUDA requested" : "CUDA device found"};
  }
  return cpu_choice(plugin.state == CudaPluginState::loaded ? q.reason + " (CUDA plugin loaded)"
                                                            : q.reason);
}

}  // namespace rc::kernels
