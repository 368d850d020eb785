// A fake device backend for CPU-side tests of the device plumbing: it runs
// every op on the reference backend (host memory), but says it is not host
// memory, so the runner must copy the weights, and it checks that every
// pointer an op receives as backend memory lies inside one of its own live
// allocations or its KV pool. A host pointer (say, into the model's mmap)
// is recorded as an error, which take_error() reports, exactly where a real
// device would read an invalid address. An allocation budget makes
// out-of-memory reproducible.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "backend.h"
#include "cpu/cpu-backends.h"

namespace rc::kernels::test {

class CheckingBackend final : public Backend {
 public:
  explicit CheckingBackend(int64_t budget_bytes = INT64_MAX) : budget_(budget_bytes) {}

  std::string name() const override { return "checking device"; }
  bool host_memory() const override { return false; }
  int64_t free_memory() const override { return budget_ - used_; }
  std::string take_error() override {
    std::string e;
    e.swap(error_);
    return e;
  }

  void* alloc(size_t bytes) override {
    if (int64_t(bytes) > budget_ - used_) return nullptr;
    void* p = ref_->alloc(bytes);
    if (p) {
      live_[reinterpret_cast<uintptr_t>(p)] = bytes;
      used_ += int64_t(bytes);
    }
    return p;
  }
  void free(void* p) override {
    if (!p) return;
    auto it = live_.find(reinterpret_cast<uintptr_t>(p));
    if (it == live_.end()) {
      fail("free of a pointer this backend did not allocate");
      return;
    }
    used_ -= int64_t(it->second);
    live_.erase(it);
    ref_->free(p);
  }
  void upload(void* dst, const void* src, size_t bytes) override {
    need(dst, bytes, "upload");
    ref_->upload(dst, src, bytes);
  }
  void download(void* dst, const void* src, size_t bytes) override {
    need(src, bytes, "download");
    ref_->download(dst, src, bytes);
  }
  std::unique_ptr<KvPool> make_kv_pool(const KvPoolShape& shape) override {
    return ref_->make_kv_pool(shape);  // host memory the ops accept as the pool
  }

  void matmul(const Weight& w, const float* bias, const float* x, float* y, int n) override {
    need(w.data, size_t(w.rows * row_bytes(w.type, w.cols)), "matmul weight");
    if (bias) need(bias, size_t(w.rows) * 4, "matmul bias");
    need(x, size_t(n) * size_t(w.cols) * 4, "matmul x");
    need(y, size_t(n) * size_t(w.rows) * 4, "matmul y");
    ref_->matmul(w, bias, x, y, n);
  }
  void get_rows(const Weight& table, const int32_t* ids, float* out, int n) override {
    need(table.data, size_t(table.rows * row_bytes(table.type, table.cols)), "get_rows table");
    need(ids, size_t(n) * 4, "get_rows ids");
    need(out, size_t(n) * size_t(table.cols) * 4, "get_rows out");
    ref_->get_rows(table, ids, out, n);
  }
  void rmsnorm(const float* x, const float* w, float* y, int n, int dim, float eps) override {
    need(x, size_t(n) * size_t(dim) * 4, "rmsnorm x");
    need(w, size_t(dim) * 4, "rmsnorm weight");
    need(y, size_t(n) * size_t(dim) * 4, "rmsnorm y");
    ref_->rmsnorm(x, w, y, n, dim, eps);
  }
  void rope(float* x, const int32_t* pos, int n, int n_heads, int head_dim,
            const RopeConfig& cfg) override {
    need(x, size_t(n) * size_t(n_heads) * size_t(head_dim) * 4, "rope x");
    ref_->rope(x, pos, n, n_heads, head_dim, cfg);  // pos: host memory by contract
  }
  void swiglu(const float* gate, const float* up, float* out, int64_t count) override {
    need(gate, size_t(count) * 4, "swiglu gate");
    need(up, size_t(count) * 4, "swiglu up");
    need(out, size_t(count) * 4, "swiglu out");
    ref_->swiglu(gate, up, out, count);
  }
  void add(float* y, const float* x, int64_t count) override {
    need(y, size_t(count) * 4, "add y");
    need(x, size_t(count) * 4, "add x");
    ref_->add(y, x, count);
  }
  void kv_store(KvPool& pool, int layer, const float* k, const float* v, const int32_t* slots,
                int n) override {
    const size_t bytes = size_t(n) * size_t(pool.shape().n_kv_heads * pool.shape().head_dim) * 4;
    need(k, bytes, "kv_store k");
    need(v, bytes, "kv_store v");
    ref_->kv_store(pool, layer, k, v, slots, n);
  }
  void attention(KvPool& pool, int layer, const float* q, float* out,
                 std::span<const AttentionSeq> seqs, int n_heads, float scale) override {
    int rows = 0;
    for (const AttentionSeq& s : seqs) rows = std::max(rows, s.q_row + s.n_new);
    const size_t bytes = size_t(rows) * size_t(n_heads) * size_t(pool.shape().head_dim) * 4;
    need(q, bytes, "attention q");
    need(out, bytes, "attention out");
    ref_->attention(pool, layer, q, out, seqs, n_heads, scale);
  }
  void copy_pages(KvPool& pool, const int32_t* src, const int32_t* dst, int n) override {
    ref_->copy_pages(pool, src, dst, n);
  }
  int32_t argmax(const float* x, int n) override {
    need(x, size_t(n) * 4, "argmax");
    return ref_->argmax(x, n);
  }

  size_t live_allocations() const { return live_.size(); }
  int64_t used_bytes() const { return used_; }
  // True when [p, p + bytes) lies in one live allocation.
  bool owns(const void* p, size_t bytes) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    auto it = live_.upper_bound(a);
    if (it == live_.begin()) return false;
    --it;
    return a >= it->first && a + bytes <= it->first + it->second;
  }

 private:
  void fail(const std::string& what) {
    if (error_.empty()) error_ = what;
  }
  void need(const void* p, size_t bytes, const char* what) {
    if (!owns(p, bytes)) fail(std::string(what) + ": pointer outside this backend's memory");
  }

  std::unique_ptr<Backend> ref_ = make_reference_backend();
  std::map<uintptr_t, size_t> live_;
  int64_t budget_;
  int64_t used_ = 0;
  std::string error_;
};

}  // namespace rc::kernels::test
