// Helpers of the GPU tests: the skip rule, device buffers owned by a test,
// and the CPU reference every CUDA op is compared with.
//
// Skip rule: a test that needs a GPU calls RC_REQUIRE_CUDA(backend) first;
// where no device answers (CI: no driver) it ends with GTEST_SKIP and the
// reason, so ctest reports it as skipped, never failed.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "cpu/cpu-backends.h"
#include "cuda/cuda-backend.h"
#include "kernels/kernel-test-util.h"

namespace rc::kernels::test {

// Makes a CUDA backend into `var` or skips the test with the reason.
#define RC_REQUIRE_CUDA(var)                                             \
  std::unique_ptr<::rc::kernels::Backend> var;                           \
  do {                                                                   \
    std::string rc_why_;                                                 \
    var = ::rc::kernels::cuda::make_cuda_backend(&rc_why_);              \
    if (!var) GTEST_SKIP() << "needs a CUDA device (" << rc_why_ << ")"; \
  } while (0)

// A buffer in a backend's memory, freed with the object.
class DevBuf {
 public:
  DevBuf(Backend& b, size_t bytes) : b_(&b), p_(b.alloc(bytes)), bytes_(bytes) {}
  ~DevBuf() {
    if (p_) b_->free(p_);
  }
  DevBuf(DevBuf&& o) noexcept : b_(o.b_), p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;

  template <typename T = float>
  T* as() const {
    return static_cast<T*>(p_);
  }
  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }

 private:
  Backend* b_;
  void* p_;
  size_t bytes_;
};

template <typename T>
DevBuf to_device(Backend& b, const std::vector<T>& v) {
  DevBuf d(b, v.size() * sizeof(T));
  if (d.get() && !v.empty()) b.upload(d.get(), v.data(), v.size() * sizeof(T));
  return d;
}

template <typename T = float>
std::vector<T> from_device(Backend& b, const void* p, size_t count) {
  std::vector<T> v(count);
  if (count) b.download(v.data(), p, count * sizeof(T));
  return v;
}

// A weight copied to the device, with its Weight view.
struct DevWeight {
  DevBuf buf;
  Weight w;
};

inline DevWeight to_device(Backend& b, const OwnedWeight& ow) {
  DevBuf d = to_device(b, ow.bytes);
  Weight w = ow.w;
  w.data = d.get();
  return DevWeight{std::move(d), w};
}

// Fails the test with the backend's recorded error, if any.
inline void expect_no_error(Backend& b, const std::string& what) {
  const std::string e = b.take_error();
  EXPECT_TRUE(e.empty()) << what << ": " << e;
}

inline std::vector<float> abs_of(const std::vector<float>& v) {
  std::vector<float> a(v.size());
  for (size_t i = 0; i < v.size(); ++i) a[i] = std::fabs(v[i]);
  return a;
}

}  // namespace rc::kernels::test
