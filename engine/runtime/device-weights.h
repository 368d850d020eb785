// The model's weights in the backend's memory.
//
// ModelWeights views point into the GGUF mapping (host memory). A backend
// whose memory is not host memory (CUDA) cannot read them, so the runner
// copies every tensor once, at creation, through Backend::alloc/upload and
// runs on those copies; so does a host-memory backend that reads its own
// memory faster (Backend::prefers_weight_copies: the CPU backend's huge
// pages). Either way the mapping's pages of the copied tensors then go
// back to the kernel, so the process holds each weight once. For any other
// host-memory backend nothing is copied and the views are the model's own
// (identity).
//
// Lifetime: the copies belong to this object and are freed with it; it must
// not outlive the backend. Thread: used on the thread that owns the backend.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backend.h"
#include "model/model-file.h"
#include "radixchat/status.h"

namespace rc::runtime {

class DeviceWeights {
 public:
  // Fails with StatusCode::internal, naming the tensor and the sizes, when
  // the backend runs out of memory; everything allocated so far is freed.
  // host_copies = false: a host-memory backend gets the model's own views
  // even where it prefers copies.
  static Result<std::unique_ptr<DeviceWeights>> create(const model::ModelFile& model,
                                                       kernels::Backend& backend,
                                                       bool host_copies = true);
  ~DeviceWeights();
  DeviceWeights(const DeviceWeights&) = delete;
  DeviceWeights& operator=(const DeviceWeights&) = delete;

  // Views in backend memory: same types and shapes as the model's, tied
  // output still pointing at the same (single) copy of token_embd.
  const model::ModelWeights& weights() const { return *view_; }
  // False when weights() is the model's own.
  bool copied() const { return !owned_.empty(); }
  // Bytes copied to the backend (0 when nothing was copied).
  uint64_t bytes() const { return bytes_; }

  // Bytes of every distinct tensor the runner reads, as a copy would need.
  static uint64_t bytes_needed(const model::ModelWeights& w);

 private:
  DeviceWeights(kernels::Backend& backend) : backend_(backend) {}

  kernels::Backend& backend_;
  const model::ModelWeights* view_ = nullptr;
  model::ModelWeights copy_;
  std::vector<void*> owned_;
  uint64_t bytes_ = 0;
};

}  // namespace rc::runtime
