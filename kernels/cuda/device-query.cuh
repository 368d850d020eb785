// Asks the CUDA runtime for the first usable device.
// Callable from plain C++ (no CUDA types in the interface). Thread-safe.
#pragma once

#include <string>

namespace rc::kernels::cuda {

struct DeviceQuery {
  bool usable = false;
  std::string name;    // device name when usable
  std::string reason;  // runtime's error string when not usable
  int compute_major = 0;
  int compute_minor = 0;
  size_t free_bytes = 0;
  size_t total_bytes = 0;
};

DeviceQuery query_first_device();

}  // namespace rc::kernels::cuda
