// Device memory helpers of the CUDA backend (host code; g++ compiles it).
//
// DeviceBuffer: scratch that grows on demand and never shrinks.
// HostMirror:   the device copy of a host array that ops receive as host
//               memory (positions, slots, attention plans). It re-uploads
//               only when the bytes change, so the same table passed to the
//               22 layers of a step crosses the bus once.
// Both wait for the stream before freeing or overwriting memory that queued
// work may still read, and report failures through the LaunchCtx.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda-common.cuh"

namespace rc::kernels::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // At least `bytes` of device memory (contents not kept on growth), or
  // nullptr after reporting the failure.
  void* ensure(const LaunchCtx& ctx, size_t bytes, const char* what);
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  size_t cap_ = 0;
};

class HostMirror {
 public:
  HostMirror() = default;
  ~HostMirror();
  HostMirror(const HostMirror&) = delete;
  HostMirror& operator=(const HostMirror&) = delete;

  // Device copy of host[0 .. bytes), valid for work queued after this call
  // on ctx.stream until the next get(); nullptr after reporting a failure.
  const void* get(const LaunchCtx& ctx, const void* host, size_t bytes, const char* what);

 private:
  void* dev_ = nullptr;
  size_t dev_cap_ = 0;
  void* pinned_ = nullptr;  // staging, so the upload is a true async copy
  size_t pinned_cap_ = 0;
  cudaEvent_t copied_ = nullptr;  // the last upload out of pinned_ finished
  std::vector<uint8_t> last_;     // what dev_ holds
  bool valid_ = false;
};

}  // namespace rc::kernels::cuda
