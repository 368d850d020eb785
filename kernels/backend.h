// The compute interface the model runner needs (docs/architecture.md section 11).
//
// A backend knows tensors, page tables and streams, never requests or trees.
// Every pointer passed to an op lives in the backend's memory (host memory
// for the CPU backend, device memory for CUDA); shapes are given in
// elements, row-major, innermost last, and are noted as [rows][cols].
//
// Threading: a Backend is driven by one thread at a time (the engine
// thread); it may use its own worker threads inside an op. Ops are
// synchronous from the caller's view unless a backend documents otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "dtype.h"

namespace rc::kernels {

// A weight matrix [rows = out features][cols = in features] in its storage
// type; each row is row_bytes(type, cols) bytes. A 1-D weight has rows == 1.
struct Weight {
  DType type = DType::f32;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
};

// The KV page pool of all layers. A page holds `page_size` consecutive
// positions; position p of a sequence lives in slot
//   page_table[p / page_size] * page_size + p % page_size.
// For each layer, K and V are [n_pages * page_size][n_kv_heads * head_dim]
// elements of `type`: f16 (the engine's default: half the bytes of f32, so
// twice the cached tokens in the same memory), bf16 or f32. kv_store rounds
// to nearest even; attention reads the stored values widened to fp32.
struct KvPoolShape {
  int n_layers = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int page_size = 1;
  int64_t n_pages = 0;
  DType type = DType::f32;
};

// True for the element types a KV pool may have (f32, f16, bf16).
inline bool is_kv_type(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }
// Bytes of one K or V element of a pool of type t (2 or 4).
inline int64_t kv_elem_bytes(DType t) { return t == DType::f32 ? 4 : 2; }
// Bytes that one cached token takes in a pool of this shape (K and V, all layers).
inline int64_t kv_bytes_per_token(const KvPoolShape& s) {
  return 2 * int64_t(s.n_layers) * s.n_kv_heads * s.head_dim * kv_elem_bytes(s.type);
}

class KvPool {
 public:
  virtual ~KvPool() = default;
  virtual const KvPoolShape& shape() const = 0;
  // Base of layer `layer`'s K (or V) array in backend memory; elements are
  // of shape().type.
  virtual void* k(int layer) = 0;
  virtual void* v(int layer) = 0;
};

// One sequence of an attention batch. Its queries are rows
// [q_row, q_row + n_new) of q; they sit at positions [n_past, n_past + n_new)
// and attend causally to positions [0, own position], read through
// page_table (which covers at least n_past + n_new positions). The chunk's
// own K/V must already be stored in the pool (kv_store) before attention.
struct AttentionSeq {
  const int32_t* page_table = nullptr;  // host memory on every backend
  int n_past = 0;
  int n_new = 0;
  int q_row = 0;
};

// Rotary position embedding as a GGUF architecture defines it.
struct RopeConfig {
  int n_rot = 0;               // rotated dims per head (== head_dim for llama/qwen2)
  float freq_base = 10000.0f;  // theta
  bool neox_halves = false;    // false: rotate adjacent pairs (llama); true: halves (qwen2)
  // llama3 scaling; factor 0 disables it.
  float llama3_factor = 0.0f;
  float llama3_low_freq_factor = 1.0f;
  float llama3_high_freq_factor = 4.0f;
  int llama3_original_context = 8192;
  bool operator==(const RopeConfig&) const = default;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // Backend memory. alloc returns nullptr when out of memory.
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* p) = 0;
  virtual void upload(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void download(void* host_dst, const void* src, size_t bytes) = 0;
  // A KV pool of the given shape, zero-filled; nullptr when out of memory.
  virtual std::unique_ptr<KvPool> make_kv_pool(const KvPoolShape& shape) = 0;

  // y[n][w.rows] = x[n][w.cols] * w^T, plus bias[w.rows] (fp32) when non-null.
  virtual void matmul(const Weight& w, const float* bias, const float* x, float* y, int n) = 0;
  // One matmul of the same x[n][cols] per entry (q/k/v, gate/up), each with
  // exactly the result matmul gives it; a backend may prepare x once and
  // run the rows of all of them as one parallel loop (decode: one hand-off
  // instead of one per weight). The outputs must not alias x or each other.
  struct MatmulOut {
    const Weight* w;
    const float* bias;  // or null
    float* y;           // [n][w->rows]
  };
  virtual void matmuls(std::span<const MatmulOut> outs, const float* x, int n) {
    for (const MatmulOut& o : outs) matmul(*o.w, o.bias, x, o.y, n);
  }
  // out[n][table.cols] = rows ids[i] of table, converted to fp32 (embedding gather).
  virtual void get_rows(const Weight& table, const int32_t* ids, float* out, int n) = 0;
  // y[n][dim] = x / rms(x) * w, per row; y may alias x.
  virtual void rmsnorm(const float* x, const float* w, float* y, int n, int dim, float eps) = 0;
  // In place on x[n][n_heads * head_dim]; row i is at position pos[i] (host memory).
  virtual void rope(float* x, const int32_t* pos, int n, int n_heads, int head_dim,
                    const RopeConfig& cfg) = 0;
  // out[i] = silu(gate[i]) * up[i]; out may alias gate.
  virtual void swiglu(const float* gate, const float* up, float* out, int64_t count) = 0;
  // y[i] += x[i]
  virtual void add(float* y, const float* x, int64_t count) = 0;
  // Stores k, v [n][n_kv_heads * head_dim] of `layer` into pool slots slots[i] (host memory).
  virtual void kv_store(KvPool& pool, int layer, const float* k, const float* v,
                        const int32_t* slots, int n) = 0;
  // out[rows][n_heads * head_dim] = softmax(q k^T * scale) v per sequence,
  // with grouped-query attention (n_heads a multiple of the pool's n_kv_heads).
  virtual void attention(KvPool& pool, int layer, const float* q, float* out,
                         std::span<const AttentionSeq> seqs, int n_heads, float scale) = 0;
  // Copies whole pages src[i] -> dst[i] in every layer (K and V).
  virtual void copy_pages(KvPool& pool, const int32_t* src, const int32_t* dst, int n) = 0;
  // Index of the largest of x[n] (first on ties).
  virtual int32_t argmax(const float* x, int n) = 0;

  // ---- Device backends. The defaults describe a host-memory backend, so the
  // CPU backends need not override them.

  // True when backend memory is host memory, so the model's mmapped weights
  // can be passed to ops as they are. False (CUDA): weights must first be
  // copied with alloc/upload (runtime/device-weights.h does it once).
  virtual bool host_memory() const { return true; }
  // Host-memory backends: whether the runner should copy `bytes` of
  // weights into alloc'd memory rather than pass the file mapping, because
  // the ops read that faster (the CPU backend: huge pages). Device backends
  // always get copies (runtime/device-weights.h).
  virtual bool prefers_weight_copies(uint64_t /*bytes*/) const { return false; }
  // Backend memory still free in bytes, or -1 when unknown (host backends).
  virtual int64_t free_memory() const { return -1; }
  // The first error an op, transfer or allocation of the pool hit since the
  // last call, then cleared; empty when none. Ops of a device backend are
  // queued and return before they run, so their failures (a CUDA error, a
  // shape the device kernels do not support) surface here, at the latest
  // after the next download. Host backends never record one.
  virtual std::string take_error() { return {}; }
  // out[r] = argmax(x[r][0 .. n)) for r < rows, written to host memory; x is
  // backend memory. One transfer of `rows` ids instead of rows * n logits.
  virtual void argmax_rows(const float* x, int rows, int n, int32_t* out_host) {
    for (int r = 0; r < rows; ++r) out_host[r] = argmax(x + int64_t(r) * n, n);
  }
};

}  // namespace rc::kernels
