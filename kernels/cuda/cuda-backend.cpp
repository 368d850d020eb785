// The CUDA backend: memory, the device KV pool, host-argument mirrors and
// the dispatch of each op to its launcher (one .cu per op). Host code only;
// the contract is in cuda-backend.h.
#include "cuda-backend.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "attention.cuh"
#include "cpu/rope-freqs.h"
#include "device-buffers.h"
#include "device-query.cuh"
#include "elementwise.cuh"
#include "gemm.cuh"
#include "gemv.cuh"
#include "get-rows.cuh"
#include "kv-cache.cuh"
#include "rc-assert.h"
#include "rmsnorm.cuh"
#include "roofline.cuh"
#include "rope.cuh"
#include "sampling.cuh"

namespace rc::kernels::cuda {
namespace {

// K and V of every layer in one allocation (layout in kv-cache.cuh).
class CudaKvPool final : public KvPool {
 public:
  CudaKvPool(const KvPoolShape& s, char* base, int64_t layer_bytes)
      : shape_(s), base_(base), layer_bytes_(layer_bytes) {}
  ~CudaKvPool() override { cudaFree(base_); }
  const KvPoolShape& shape() const override { return shape_; }
  void* k(int layer) override { return base_ + int64_t(2 * layer) * layer_bytes_; }
  void* v(int layer) override { return base_ + int64_t(2 * layer + 1) * layer_bytes_; }
  char* base() const { return base_; }
  int64_t layer_bytes() const { return layer_bytes_; }

 private:
  KvPoolShape shape_;
  char* base_;
  int64_t layer_bytes_;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(cudaStream_t stream, cublasHandle_t cublas, const cudaDeviceProp& prop)
      : stream_(stream),
        cublas_(cublas),
        sm_count_(prop.multiProcessorCount),
        bf16_native_(prop.major >= 8) {
    name_ = std::string("cuda (") + prop.name + ", sm_" + std::to_string(prop.major) +
            std::to_string(prop.minor) + ")";
  }

  ~CudaBackend() override {
    // Mirrors and buffers free their memory in their own destructors, after
    // this body; they no longer need the stream once it has drained.
    cudaStreamSynchronize(stream_);
    cublasDestroy(cublas_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return name_; }
  bool host_memory() const override { return false; }

  int64_t free_memory() const override {
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
      cudaGetLastError();
      return -1;
    }
    return int64_t(free);
  }

  std::string take_error() override {
    // Faults of queued kernels surface at a synchronising call; peek so a
    // caller that checks after a step without a download still hears of them.
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e != cudaSuccess && e != cudaErrorNotReady) ctx().check(e, "device");
    std::string out;
    out.swap(error_);
    return out;
  }

  void* alloc(size_t bytes) override {
    void* p = nullptr;
    if (cudaMalloc(&p, std::max<size_t>(bytes, 1)) != cudaSuccess) {
      cudaGetLastError();  // out of memory is an answer (nullptr), not a sticky error
      return nullptr;
    }
    return p;
  }

  void free(void* p) override {
    if (!p) return;
    ctx().check(cudaStreamSynchronize(stream_), "free");
    ctx().check(cudaFree(p), "free");
  }

  void upload(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    // From pageable memory the call returns once `src` has been staged, so
    // the caller may reuse it at once; from pinned memory it would not.
    ctx().check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "upload");
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, src) != cudaSuccess) {
      cudaGetLastError();
    } else if (attr.type == cudaMemoryTypeHost) {
      ctx().check(cudaStreamSynchronize(stream_), "upload");
    }
  }

  void download(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    ctx().check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "download");
    ctx().check(cudaStreamSynchronize(stream_), "download");
  }

  std::unique_ptr<KvPool> make_kv_pool(const KvPoolShape& s) override {
    if (s.n_layers <= 0 || s.n_kv_heads <= 0 || s.head_dim <= 0 || s.page_size <= 0 ||
        s.n_pages <= 0 || !is_kv_type(s.type)) {
      return nullptr;
    }
    if (!attention_supports(s.head_dim)) {
      ctx().fail("KV pool: head_dim " + std::to_string(s.head_dim) +
                 " is not supported by the CUDA attention kernels (a multiple of 4, at most " +
                 std::to_string(kAttnMaxHeadDim) + ")");
      return nullptr;
    }
    // Sizes past what any device holds are out of memory, not an overflow.
    const double want = double(s.n_pages) * s.page_size * s.n_kv_heads * s.head_dim * 2.0 *
                        double(kv_elem_bytes(s.type)) * s.n_layers;
    if (want > 9.0e18) return nullptr;
    const int64_t layer_bytes =
        s.n_pages * s.page_size * int64_t(s.n_kv_heads) * s.head_dim * kv_elem_bytes(s.type);
    const size_t bytes = size_t(layer_bytes) * 2 * size_t(s.n_layers);
    void* base = alloc(bytes);
    if (!base) return nullptr;
    if (!ctx().check(cudaMemsetAsync(base, 0, bytes, stream_), "KV pool") ||
        !ctx().check(cudaStreamSynchronize(stream_), "KV pool")) {
      cudaFree(base);
      return nullptr;
    }
    return std::make_unique<CudaKvPool>(s, static_cast<char*>(base), layer_bytes);
  }

  void matmul(const Weight& w, const float* bias, const float* x, float* y, int n) override {
    if (n <= 0 || w.rows <= 0) return;
    const bool blocks = block_elems(w.type) > 1;
    // BF16 without bf16 tensor cores is dequantized to fp16 in segments,
    // which needs whole segments; odd shapes stay on the GEMV.
    const bool gemv_only = w.type == DType::bf16 && !bf16_native_ && w.cols % 8 != 0;
    if (gemv_only || n <= (blocks ? kGemvMaxTokensBlocks : kGemvMaxTokensFloat)) {
      launch_gemv(ctx(), w.type, w.data, w.rows, w.cols, x, n, bias, y);
      return;
    }
    GemmScratch scratch;
    if (w.type != DType::f32) {
      scratch.act16 = act16_.ensure(ctx(), size_t(gemm_act16_bytes(n, w.cols)), "matmul");
      if (!scratch.act16) return;
      const int64_t w16 = gemm_w16_bytes(w.type, w.rows, w.cols, bf16_native_);
      if (w16 > 0) {
        scratch.w16 = w16_.ensure(ctx(), size_t(w16), "matmul");
        if (!scratch.w16) return;
      }
    }
    launch_gemm(ctx(), cublas_, scratch, w.type, w.data, w.rows, w.cols, x, n, y, bf16_native_);
    if (bias) launch_add_bias(ctx(), y, bias, n, w.rows);
  }

  void get_rows(const Weight& table, const int32_t* ids, float* out, int n) override {
    launch_get_rows(ctx(), table.type, table.data, table.rows, table.cols, ids, out, n);
  }

  void rmsnorm(const float* x, const float* w, float* y, int n, int dim, float eps) override {
    launch_rmsnorm(ctx(), x, w, y, n, dim, eps);
  }

  void rope(float* x, const int32_t* pos, int n, int n_heads, int head_dim,
            const RopeConfig& cfg) override {
    if (n <= 0) return;
    RC_ASSERT(cfg.n_rot <= head_dim);
    if (!same_rope(cfg)) {
      rope_cfg_ = cfg;
      rope_freq_ = rope_freqs(cfg);
    }
    const auto* f = static_cast<const double*>(
        freq_mirror_.get(ctx(), rope_freq_.data(), rope_freq_.size() * sizeof(double), "rope"));
    const auto* p = static_cast<const int32_t*>(
        pos_mirror_.get(ctx(), pos, size_t(n) * sizeof(int32_t), "rope positions"));
    if (!f || !p) return;
    launch_rope(ctx(), x, p, f, n, n_heads, head_dim, cfg.n_rot, cfg.neox_halves);
  }

  void swiglu(const float* gate, const float* up, float* out, int64_t count) override {
    launch_swiglu(ctx(), gate, up, out, count);
  }

  void add(float* y, const float* x, int64_t count) override { launch_add(ctx(), y, x, count); }

  void kv_store(KvPool& pool, int layer, const float* k, const float* v, const int32_t* slots,
                int n) override {
    if (n <= 0) return;
    CudaKvPool* p = own_pool(pool, "kv_store");
    if (!p) return;
    const KvPoolShape& s = p->shape();
    RC_ASSERT(layer >= 0 && layer < s.n_layers);
    for (int i = 0; i < n; ++i) RC_ASSERT(slots[i] >= 0 && slots[i] < s.n_pages * s.page_size);
    const auto* d = static_cast<const int32_t*>(
        slot_mirror_.get(ctx(), slots, size_t(n) * sizeof(int32_t), "kv_store slots"));
    if (!d) return;
    launch_kv_store(ctx(), s.type, p->k(layer), p->v(layer), k, v, d, n,
                    s.n_kv_heads * s.head_dim);
  }

  void attention(KvPool& pool, int layer, const float* q, float* out,
                 std::span<const AttentionSeq> seqs, int n_heads, float scale) override {
    CudaKvPool* p = own_pool(pool, "attention");
    if (!p) return;
    const KvPoolShape& s = p->shape();
    RC_ASSERT(layer >= 0 && layer < s.n_layers);
    RC_ASSERT(n_heads % s.n_kv_heads == 0);
    const AttnShape shape{n_heads, s.n_kv_heads, s.head_dim, s.page_size};
    plan_attention(seqs, shape, s.n_pages, sm_count_, plan_);
    if (plan_.n_items == 0) return;
    const auto* blob = static_cast<const int32_t*>(attn_mirror_.get(
        ctx(), plan_.blob.data(), plan_.blob.size() * sizeof(int32_t), "attention plan"));
    if (!blob) return;
    float* partial = nullptr;
    if (plan_.partial_floats > 0) {
      partial = static_cast<float*>(
          partial_.ensure(ctx(), size_t(plan_.partial_floats) * sizeof(float), "attention"));
      if (!partial) return;
    }
    launch_attention(ctx(), shape, plan_, s.type, p->k(layer), p->v(layer), q, out, blob, partial,
                     scale);
  }

  void copy_pages(KvPool& pool, const int32_t* src, const int32_t* dst, int n) override {
    if (n <= 0) return;
    CudaKvPool* p = own_pool(pool, "copy_pages");
    if (!p) return;
    const KvPoolShape& s = p->shape();
    for (int i = 0; i < n; ++i) {
      RC_ASSERT(src[i] >= 0 && src[i] < s.n_pages && dst[i] >= 0 && dst[i] < s.n_pages);
    }
    const int64_t page_bytes =
        int64_t(s.page_size) * s.n_kv_heads * s.head_dim * kv_elem_bytes(s.type);
    // The reference copies pair after pair. Pairs may run concurrently only
    // when no page written by one pair is read or written by another.
    std::unordered_map<int32_t, int> uses;
    for (int i = 0; i < n; ++i) {
      ++uses[src[i]];
      if (dst[i] != src[i]) ++uses[dst[i]];
    }
    bool independent = true;
    for (int i = 0; i < n && independent; ++i) independent = uses[dst[i]] == 1 || dst[i] == src[i];
    const int chunk = independent ? n : 1;
    for (int i0 = 0; i0 < n; i0 += chunk) {
      const int m = std::min(chunk, n - i0);
      page_pairs_.assign(src + i0, src + i0 + m);
      page_pairs_.insert(page_pairs_.end(), dst + i0, dst + i0 + m);
      const auto* d = static_cast<const int32_t*>(page_mirror_.get(
          ctx(), page_pairs_.data(), page_pairs_.size() * sizeof(int32_t), "copy_pages"));
      if (!d) return;
      launch_copy_pages(ctx(), p->base(), p->layer_bytes(), s.n_layers, page_bytes, d, d + m, m);
    }
  }

  int32_t argmax(const float* x, int n) override {
    int32_t id = 0;
    argmax_rows(x, 1, n, &id);
    return id;
  }

  void argmax_rows(const float* x, int rows, int n, int32_t* out_host) override {
    if (rows <= 0) return;
    auto* d = static_cast<int32_t*>(ids_.ensure(ctx(), size_t(rows) * sizeof(int32_t), "argmax"));
    std::fill(out_host, out_host + rows, 0);
    if (!d) return;
    launch_argmax_rows(ctx(), x, rows, n, d);
    download(out_host, d, size_t(rows) * sizeof(int32_t));
  }

  bool sample(const float* logits, int rows, int n, const DeviceSampling* params, const float* u,
              int32_t* ids) {
    if (rows <= 0) return true;
    sample_params_.resize(size_t(rows) * kSampleParamFloats);
    for (int r = 0; r < rows; ++r) {
      float* p = sample_params_.data() + size_t(r) * kSampleParamFloats;
      p[0] = params[r].temperature;
      p[1] = float(std::clamp(params[r].top_k, 0, n));
      p[2] = params[r].top_p;
      p[3] = std::clamp(u[r], 0.0f, 1.0f);
    }
    const auto* dp = static_cast<const float*>(sample_mirror_.get(
        ctx(), sample_params_.data(), sample_params_.size() * sizeof(float), "sample"));
    auto* d = static_cast<int32_t*>(ids_.ensure(ctx(), size_t(rows) * sizeof(int32_t), "sample"));
    if (!dp || !d) return false;
    launch_sample_rows(ctx(), logits, rows, n, dp, d);
    download(ids, d, size_t(rows) * sizeof(int32_t));
    return error_.empty();
  }

  bool softmax(float* x, int rows, int n, float temperature) {
    launch_softmax_rows(ctx(), x, rows, n, temperature);
    return error_.empty();
  }

 private:
  LaunchCtx ctx() const { return LaunchCtx{stream_, &error_, sm_count_}; }

  CudaKvPool* own_pool(KvPool& pool, const char* op) {
    auto* p = dynamic_cast<CudaKvPool*>(&pool);
    if (!p) ctx().fail(std::string(op) + ": the KV pool was not made by the CUDA backend");
    return p;
  }

  bool same_rope(const RopeConfig& c) const {
    const RopeConfig& o = rope_cfg_;
    return !rope_freq_.empty() && c.n_rot == o.n_rot && c.freq_base == o.freq_base &&
           c.llama3_factor == o.llama3_factor &&
           c.llama3_low_freq_factor == o.llama3_low_freq_factor &&
           c.llama3_high_freq_factor == o.llama3_high_freq_factor &&
           c.llama3_original_context == o.llama3_original_context;
  }

  cudaStream_t stream_;
  cublasHandle_t cublas_;
  int sm_count_;
  bool bf16_native_;  // bf16 tensor cores (sm >= 80)
  std::string name_;
  mutable std::string error_;

  DeviceBuffer act16_, w16_, partial_, ids_;
  HostMirror pos_mirror_, slot_mirror_, attn_mirror_, page_mirror_, freq_mirror_, sample_mirror_;
  AttnPlan plan_;
  RopeConfig rope_cfg_;
  std::vector<double> rope_freq_;
  std::vector<int32_t> page_pairs_;
  std::vector<float> sample_params_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(std::string* error) {
  auto fail = [&](const std::string& why) -> std::unique_ptr<Backend> {
    if (error) *error = why;
    return nullptr;
  };
  const DeviceQuery q = query_first_device();
  if (!q.usable) return fail(q.reason);
  cudaDeviceProp prop{};
  cudaError_t e = cudaGetDeviceProperties(&prop, 0);
  if (e != cudaSuccess) return fail(std::string("CUDA device 0: ") + cudaGetErrorString(e));
  e = cudaSetDevice(0);
  if (e != cudaSuccess) return fail(std::string("CUDA device 0: ") + cudaGetErrorString(e));
  cudaStream_t stream = nullptr;
  e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) return fail(std::string("CUDA stream: ") + cudaGetErrorString(e));
  cublasHandle_t cublas = nullptr;
  cublasStatus_t cs = cublasCreate(&cublas);
  if (cs == CUBLAS_STATUS_SUCCESS) cs = cublasSetStream(cublas, stream);
  // Default math: Sgemm stays fp32 (no TF32), which the 1e-5 contract needs.
  if (cs == CUBLAS_STATUS_SUCCESS) cs = cublasSetMathMode(cublas, CUBLAS_DEFAULT_MATH);
  if (cs != CUBLAS_STATUS_SUCCESS) {
    if (cublas) cublasDestroy(cublas);
    cudaStreamDestroy(stream);
    return fail(std::string("cuBLAS: ") + cublas_status_text(cs));
  }
  auto backend = std::make_unique<CudaBackend>(stream, cublas, prop);
  // Smoke test: a kernel, a copy and a sync, so a broken context fails here
  // (and the engine falls back to the CPU) instead of in the first request.
  int32_t id = -1;
  float* x = static_cast<float*>(backend->alloc(4 * sizeof(float)));
  if (!x) return fail("CUDA device 0 is out of memory");
  const float host[4] = {0.0f, 3.0f, 1.0f, 3.0f};
  backend->upload(x, host, sizeof(host));
  id = backend->argmax(x, 4);
  backend->free(x);
  const std::string err = backend->take_error();
  if (!err.empty()) return fail("CUDA smoke test failed: " + err);
  if (id != 1) return fail("CUDA smoke test failed: argmax returned " + std::to_string(id));
  return backend;
}

bool is_cuda_backend(const Backend& b) { return dynamic_cast<const CudaBackend*>(&b) != nullptr; }

bool sample_rows(Backend& b, const float* logits, int rows, int n, const DeviceSampling* params,
                 const float* u, int32_t* ids) {
  auto* c = dynamic_cast<CudaBackend*>(&b);
  return c && c->sample(logits, rows, n, params, u, ids);
}

bool softmax_rows(Backend& b, float* x, int rows, int n, float temperature) {
  auto* c = dynamic_cast<CudaBackend*>(&b);
  return c && c->softmax(x, rows, n, temperature);
}

DeviceRoofline measure_roofline(size_t copy_bytes, int gemm_m) {
  DeviceRoofline r;
  const DeviceQuery q = query_first_device();
  if (!q.usable) {
    r.error = q.reason;
    return r;
  }
  r.device = q.name;
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    r.error = "cannot create a CUDA stream";
    return r;
  }
  r.copy_gbs = measure_copy_gbs(stream, copy_bytes, 10, &r.error);
  cublasHandle_t h = nullptr;
  if (r.error.empty() && cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
    r.fp16_tflops = measure_fp16_gemm_tflops(h, stream, gemm_m, 10, &r.error);
    cublasDestroy(h);
  } else if (r.error.empty()) {
    r.error = "cuBLAS did not initialise";
  }
  cudaStreamDestroy(stream);
  return r;
}

}  // namespace rc::kernels::cuda
