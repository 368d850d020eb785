#include "host-memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "quant.h"
#include "rc-assert.h"

namespace rc::kernels {

void* host_alloc(size_t bytes) {
  if (bytes >= kHugePageBytes) {
    void* p = nullptr;
    if (posix_memalign(&p, kHugePageBytes, bytes) != 0) return nullptr;
    // Only whole huge pages: the tail past the last 2 MiB boundary keeps
    // small pages. A kernel without THP refuses, which changes nothing.
    ::madvise(p, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
    return p;
  }
  const size_t rounded = (bytes + kHostAlign - 1) / kHostAlign * kHostAlign;
  return std::aligned_alloc(kHostAlign, rounded == 0 ? kHostAlign : rounded);
}

bool host_huge_pages() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(f, modes);
  return modes.find("[always]") != std::string::npos ||
         modes.find("[madvise]") != std::string::npos;
}

int64_t host_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return -1;
}

void host_free(void* p) { std::free(p); }

namespace {

class HostKvPool final : public KvPool {
 public:
  explicit HostKvPool(const KvPoolShape& s) : shape_(s) {}
  ~HostKvPool() override {
    for (void* p : k_) host_free(p);
    for (void* p : v_) host_free(p);
  }
  // Allocates every layer; false when any allocation fails.
  bool init() {
    const size_t bytes = size_t(shape_.n_pages) * size_t(shape_.page_size) *
                         size_t(shape_.n_kv_heads * shape_.head_dim) *
                         size_t(kv_elem_bytes(shape_.type));
    for (int l = 0; l < shape_.n_layers; ++l) {
      k_.push_back(host_alloc(bytes));
      v_.push_back(host_alloc(bytes));
      if (!k_.back() || !v_.back()) return false;
      std::memset(k_.back(), 0, bytes);
      std::memset(v_.back(), 0, bytes);
    }
    return true;
  }
  const KvPoolShape& shape() const override { return shape_; }
  void* k(int layer) override { return k_.at(size_t(layer)); }
  void* v(int layer) override { return v_.at(size_t(layer)); }

 private:
  KvPoolShape shape_;
  std::vector<void*> k_, v_;
};

}  // namespace

std::unique_ptr<KvPool> make_host_kv_pool(const KvPoolShape& shape) {
  if (shape.n_layers <= 0 || shape.n_kv_heads <= 0 || shape.head_dim <= 0 || shape.page_size <= 0 ||
      shape.n_pages <= 0 || !is_kv_type(shape.type)) {
    return nullptr;
  }
  auto pool = std::make_unique<HostKvPool>(shape);
  if (!pool->init()) return nullptr;
  return pool;
}

void host_kv_store(KvPool& pool, int layer, const float* k, const float* v, const int32_t* slots,
                   int n, F16RowFn f16_row) {
  const KvPoolShape& s = pool.shape();
  const int64_t kv_dim = int64_t(s.n_kv_heads) * s.head_dim;
  const int64_t row = kv_dim * kv_elem_bytes(s.type);
  char* K = static_cast<char*>(pool.k(layer));
  char* V = static_cast<char*>(pool.v(layer));
  for (int i = 0; i < n; ++i) {
    RC_ASSERT(slots[i] >= 0 && slots[i] < s.n_pages * s.page_size);
    char* kd = K + slots[i] * row;
    char* vd = V + slots[i] * row;
    if (s.type == DType::f16) {
      f16_row(k + i * kv_dim, reinterpret_cast<uint16_t*>(kd), kv_dim);
      f16_row(v + i * kv_dim, reinterpret_cast<uint16_t*>(vd), kv_dim);
    } else {
      quantize_row(s.type, k + i * kv_dim, kd, kv_dim);
      quantize_row(s.type, v + i * kv_dim, vd, kv_dim);
    }
  }
}

void host_kv_copy_page(KvPool& pool, int layer, int32_t src, int32_t dst) {
  const KvPoolShape& s = pool.shape();
  RC_ASSERT(src >= 0 && src < s.n_pages && dst >= 0 && dst < s.n_pages);
  const int64_t page = int64_t(s.page_size) * s.n_kv_heads * s.head_dim * kv_elem_bytes(s.type);
  char* K = static_cast<char*>(pool.k(layer));
  char* V = static_cast<char*>(pool.v(layer));
  std::memmove(K + dst * page, K + src * page, size_t(page));
  std::memmove(V + dst * page, V + src * page, size_t(page));
}

}  // namespace rc::kernels
