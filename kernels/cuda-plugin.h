// Finding and loading the CUDA backend plugin (libradixchat-cuda.so) at run
// time, so that nothing but the plugin links a CUDA library and the
// programs start on machines without NVIDIA software.
//
// Search order (the first file that exists is the only one tried):
//   1. $RADIXCHAT_CUDA_PLUGIN: a path to the plugin file, or "none" to
//      disable the plugin (tests, or a user who wants the CPU for good).
//   2. <dir of the running program>/../lib/radixchat/: the installed layout
//      (/usr/bin -> /usr/lib/radixchat, and any other prefix the same way).
//   3. In the build tree only (the program lies under the build directory):
//      <build>/lib/radixchat/, where the plugin target writes it.
// When the plugin exists but its libraries (cuBLAS) are not on the loader's
// path, the CUDA toolkit's library directory this build used is tried once
// before giving up, since NVIDIA's packages install there.
//
// Before opening a plugin file found above, the NVIDIA driver is asked
// (cuInit, cuDeviceGetCount) whether any device exists; when none does, the
// plugin is not opened, so a machine without a GPU pays nothing for it.
// $RADIXCHAT_CUDA_DRIVER names another driver library (tests use a fake one).
//
// Thread-safe; the first call loads, later calls return the same answer.
// Never throws or aborts: every failure is a one-line reason.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.h"

namespace rc::kernels {

enum class CudaPluginState {
  not_built,    // this build has no CUDA backend (no nvcc, or RADIXCHAT_CUDA=OFF)
  disabled,     // RADIXCHAT_CUDA_PLUGIN=none
  not_found,    // no plugin file in any searched place
  no_device,    // the file exists, but the driver reports no device: not opened
  load_failed,  // the file exists but dlopen or its checks failed
  loaded,
};

struct CudaPluginStatus {
  CudaPluginState state = CudaPluginState::not_built;
  std::string path;                   // the file tried (loaded or not)
  std::string error;                  // why not loaded; empty when loaded
  std::vector<std::string> searched;  // every path looked at, in order
};

// What people read when no NVIDIA GPU is found; the detail is in describe().
inline constexpr const char* kNoGpuMessage = "No NVIDIA GPU found; running on the CPU";

// Loads the plugin on the first call; the status of that attempt.
const CudaPluginStatus& cuda_plugin_status();

// One line for people: "loaded from PATH", "not installed (looked in ...)".
std::string describe(const CudaPluginStatus& s);

// What the CUDA runtime says about device 0; `reason` is one line.
struct CudaDeviceAnswer {
  bool usable = false;
  std::string name;
  std::string reason;
};

// Asks the plugin's CUDA runtime for device 0. usable = false with the
// reason when the plugin is not loaded or no device answers.
CudaDeviceAnswer query_cuda_device();

// The CUDA backend through the plugin, or nullptr with *error set.
std::unique_ptr<Backend> make_cuda_backend(std::string* error);

}  // namespace rc::kernels
