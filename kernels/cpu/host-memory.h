// Host memory shared by the CPU backends: 64-byte aligned buffers (one cache
// line, and the widest vector load) and the host KV pool.
#pragma once

#include <cstddef>
#include <memory>

#include "backend.h"

namespace rc::kernels {

inline constexpr size_t kHostAlign = 64;

// nullptr when out of memory; bytes == 0 gives a valid unique pointer.
void* host_alloc(size_t bytes);
void host_free(void* p);

// One zero-filled 64-byte-aligned allocation per layer for K and one for V,
// each [n_pages * page_size][n_kv_heads * head_dim] fp32. nullptr when out of
// memory or when the shape is invalid (non-positive sizes).
std::unique_ptr<KvPool> make_host_kv_pool(const KvPoolShape& shape);

}  // namespace rc::kernels
