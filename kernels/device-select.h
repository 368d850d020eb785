// Which compute backend the engine runs on, and why.
//
// Contract: select_device() never throws and never aborts. When the CUDA
// backend was not built, its plugin is missing or does not load (cuda-plugin.h),
// or no CUDA device answers (no driver, no GPU, driver too old), it returns
// the CPU with a human-readable reason that the CLI, the app and the server
// show to the user.
#pragma once

#include <string>

namespace rc::kernels {

enum class DeviceKind { cpu, cuda };

struct DeviceChoice {
  DeviceKind kind = DeviceKind::cpu;
  std::string name;    // "CPU (2 threads)" or the CUDA device name
  std::string reason;  // why this backend was chosen, one line
};

// What the caller asked for: automatic (CUDA when a device answers) or one
// backend by name.
enum class DeviceRequest { automatic, cpu, cuda };

// An explicit cuda that cannot be honoured falls back to the CPU and says
// so in `reason`.
DeviceChoice select_device(DeviceRequest requested);

// True when this build made the CUDA plugin (whether or not it loads here).
bool cuda_compiled_in();

}  // namespace rc::kernels
