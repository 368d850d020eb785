// The one symbol the CUDA plugin (libradixchat-cuda.so) exports, and the
// table it returns. Shared by the plugin (kernels/cuda/plugin-entry.cpp) and
// its loader (cuda-plugin.cpp); nothing else includes it.
//
// Why C++ types cross the boundary: the plugin and the programs come from
// the same build (same compiler, same libstdc++, same headers), and the
// loader refuses a plugin whose `abi` or `build` differs from its own, so a
// Backend made in the plugin can be used and deleted by the engine. The
// plugin is never unloaded: its code must outlive every backend it made.
#pragma once

#include <memory>
#include <string>

#include "backend.h"
#include "cuda-plugin.h"

namespace rc::kernels {

// Bump when CudaPluginApi or anything it passes (Backend, KvPool, ...)
// changes shape; the build string below catches version skew as well.
inline constexpr int kCudaPluginAbi = 2;
// The project version and the C++ compiler: a plugin from another build is
// refused even when the ABI number matches. RADIXCHAT_VERSION comes from the
// build (kernels/CMakeLists.txt) for both sides.
inline constexpr const char* kCudaPluginBuild = RADIXCHAT_VERSION " " __VERSION__;

struct CudaPluginApi {
  int abi = 0;
  const char* build = nullptr;  // kCudaPluginBuild of the build that made the plugin
  // Never throws or aborts; without a driver or device, usable = false.
  CudaDeviceAnswer (*query_device)() = nullptr;
  // The backend on device 0, or nullptr with *error set (cuda-backend.h).
  std::unique_ptr<Backend> (*make_backend)(std::string* error) = nullptr;
};

}  // namespace rc::kernels

// The exported entry point: a static table, valid for the process's life.
extern "C" const rc::kernels::CudaPluginApi* radixchat_cuda_plugin_v1();
inline constexpr const char* kCudaPluginEntry = "radixchat_cuda_plugin_v1";
