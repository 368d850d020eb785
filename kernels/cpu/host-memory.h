// Host memory shared by the CPU backends: 64-byte aligned buffers (one cache
// line, and the widest vector load) and the host KV pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "backend.h"
#include "elementwise.h"

namespace rc::kernels {

inline constexpr size_t kHostAlign = 64;
// Allocations of at least this many bytes start on a 2 MiB boundary and
// ask the kernel for transparent huge pages (madvise MADV_HUGEPAGE): a
// decode step streams every weight once, and with 4 KiB pages its reads
// also walk page tables.
inline constexpr size_t kHugePageBytes = size_t(2) << 20;

// nullptr when out of memory; bytes == 0 gives a valid unique pointer.
void* host_alloc(size_t bytes);
void host_free(void* p);
// Whether the kernel gives transparent huge pages to memory that asks for
// them (/sys/kernel/mm/transparent_hugepage/enabled is not "never").
bool host_huge_pages();
// MemAvailable of /proc/meminfo in bytes; -1 when it cannot be read.
int64_t host_available_bytes();

// One zero-filled 64-byte-aligned allocation per layer for K and one for V,
// each [n_pages * page_size][n_kv_heads * head_dim] elements of shape.type.
// nullptr when out of memory or when the shape is invalid (non-positive
// sizes, a type that is not a KV type).
std::unique_ptr<KvPool> make_host_kv_pool(const KvPoolShape& shape);

// Writes rows k[i], v[i] (fp32, [n][kv_dim]) into slots slots[i] of a host
// pool's layer, rounded to the pool's type (quantize_row: nearest even; an
// F16 pool through `f16_row`, the same bits). Slots are range-checked
// (RC_ASSERT).
void host_kv_store(KvPool& pool, int layer, const float* k, const float* v, const int32_t* slots,
                   int n, F16RowFn f16_row);
// Copies page src -> dst of one layer, K and V (bytes as stored).
void host_kv_copy_page(KvPool& pool, int layer, int32_t src, int32_t dst);
// Address of slot `slot`'s row of a layer array of a pool of this shape.
inline const void* host_kv_row(const void* base, const KvPoolShape& s, int64_t slot) {
  return static_cast<const char*>(base) +
         slot * int64_t(s.n_kv_heads) * s.head_dim * kv_elem_bytes(s.type);
}

}  // namespace rc::kernels
