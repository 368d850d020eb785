#include "device-buffers.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace rc::kernels::cuda {

DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);
}

void* DeviceBuffer::ensure(const LaunchCtx& ctx, size_t bytes, const char* what) {
  if (bytes <= cap_ && p_) return p_;
  // Queued work may still read the old buffer.
  if (!ctx.check(cudaStreamSynchronize(ctx.stream), what)) return nullptr;
  if (p_) cudaFree(p_);
  p_ = nullptr;
  cap_ = 0;
  const size_t want = std::max<size_t>(bytes + bytes / 4, 256);  // some headroom against regrowth
  if (cudaMalloc(&p_, want) != cudaSuccess) {
    cudaGetLastError();  // out of memory is not sticky; do not leave it for the next check
    p_ = nullptr;
    ctx.fail(std::string(what) + ": out of device memory for " + std::to_string(want >> 20) +
             " MiB of scratch");
    return nullptr;
  }
  cap_ = want;
  return p_;
}

HostMirror::~HostMirror() {
  if (copied_) {
    cudaEventSynchronize(copied_);
    cudaEventDestroy(copied_);
  }
  if (dev_) cudaFree(dev_);
  if (pinned_) cudaFreeHost(pinned_);
}

const void* HostMirror::get(const LaunchCtx& ctx, const void* host, size_t bytes,
                            const char* what) {
  if (valid_ && bytes == last_.size() &&
      (bytes == 0 || std::memcmp(host, last_.data(), bytes) == 0)) {
    return dev_;
  }
  valid_ = false;
  if (!copied_ && !ctx.check(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming), what)) {
    return nullptr;
  }
  if (bytes > dev_cap_ || !dev_) {
    // Queued kernels may still read the old copy.
    if (!ctx.check(cudaStreamSynchronize(ctx.stream), what)) return nullptr;
    if (dev_) cudaFree(dev_);
    dev_ = nullptr;
    dev_cap_ = 0;
    const size_t want = std::max<size_t>(bytes * 2, 1024);
    if (cudaMalloc(&dev_, want) != cudaSuccess) {
      cudaGetLastError();
      dev_ = nullptr;
      ctx.fail(std::string(what) + ": out of device memory");
      return nullptr;
    }
    dev_cap_ = want;
  }
  // The previous upload must have left pinned_ before it is rewritten.
  if (!ctx.check(cudaEventSynchronize(copied_), what)) return nullptr;
  if (bytes > pinned_cap_ || !pinned_) {
    if (pinned_) cudaFreeHost(pinned_);
    pinned_ = nullptr;
    pinned_cap_ = 0;
    const size_t want = std::max<size_t>(bytes * 2, 1024);
    if (cudaMallocHost(&pinned_, want) != cudaSuccess) {
      cudaGetLastError();
      pinned_ = nullptr;
      ctx.fail(std::string(what) + ": out of pinned host memory");
      return nullptr;
    }
    pinned_cap_ = want;
  }
  if (bytes > 0) {
    std::memcpy(pinned_, host, bytes);
    if (!ctx.check(cudaMemcpyAsync(dev_, pinned_, bytes, cudaMemcpyHostToDevice, ctx.stream),
                   what) ||
        !ctx.check(cudaEventRecord(copied_, ctx.stream), what)) {
      return nullptr;
    }
  }
  last_.assign(static_cast<const uint8_t*>(host), static_cast<const uint8_t*>(host) + bytes);
  valid_ = true;
  return dev_;
}

}  // namespace rc::kernels::cuda
