#include "host-memory.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace rc::kernels {

void* host_alloc(size_t bytes) {
  const size_t rounded = (bytes + kHostAlign - 1) / kHostAlign * kHostAlign;
  return std::aligned_alloc(kHostAlign, rounded == 0 ? kHostAlign : rounded);
}

void host_free(void* p) { std::free(p); }

namespace {

class HostKvPool final : public KvPool {
 public:
  explicit HostKvPool(const KvPoolShape& s) : shape_(s) {}
  ~HostKvPool() override {
    for (float* p : k_) host_free(p);
    for (float* p : v_) host_free(p);
  }
  // Allocates every layer; false when any allocation fails.
  bool init() {
    const size_t floats = size_t(shape_.n_pages) * size_t(shape_.page_size) *
                          size_t(shape_.n_kv_heads * shape_.head_dim);
    for (int l = 0; l < shape_.n_layers; ++l) {
      k_.push_back(static_cast<float*>(host_alloc(floats * sizeof(float))));
      v_.push_back(static_cast<float*>(host_alloc(floats * sizeof(float))));
      if (!k_.back() || !v_.back()) return false;
      std::memset(k_.back(), 0, floats * sizeof(float));
      std::memset(v_.back(), 0, floats * sizeof(float));
    }
    return true;
  }
  const KvPoolShape& shape() const override { return shape_; }
  float* k(int layer) override { return k_.at(size_t(layer)); }
  float* v(int layer) override { return v_.at(size_t(layer)); }

 private:
  KvPoolShape shape_;
  std::vector<float*> k_, v_;
};

}  // namespace

std::unique_ptr<KvPool> make_host_kv_pool(const KvPoolShape& shape) {
  if (shape.n_layers <= 0 || shape.n_kv_heads <= 0 || shape.head_dim <= 0 || shape.page_size <= 0 ||
      shape.n_pages <= 0) {
    return nullptr;
  }
  auto pool = std::make_unique<HostKvPool>(shape);
  if (!pool->init()) return nullptr;
  return pool;
}

}  // namespace rc::kernels
