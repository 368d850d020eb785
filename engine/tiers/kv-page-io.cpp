#include "tiers/kv-page-io.h"

#include <cstring>

namespace rc::tiers {

namespace {

int64_t rows_bytes(const kernels::KvPoolShape& s) {
  return int64_t(s.page_size) * s.n_kv_heads * s.head_dim * kernels::kv_elem_bytes(s.type);
}

}  // namespace

std::vector<uint8_t> pack_page(kernels::KvPool& pool, int32_t page) {
  const kernels::KvPoolShape& s = pool.shape();
  const int64_t n = rows_bytes(s);
  if (page < 0 || page >= s.n_pages) return {};
  std::vector<uint8_t> out(size_t(2 * n * s.n_layers));
  uint8_t* dst = out.data();
  for (int l = 0; l < s.n_layers; ++l) {
    std::memcpy(dst, static_cast<const uint8_t*>(pool.k(l)) + page * n, size_t(n));
    std::memcpy(dst + n, static_cast<const uint8_t*>(pool.v(l)) + page * n, size_t(n));
    dst += 2 * n;
  }
  return out;
}

Status unpack_page(kernels::KvPool& pool, int32_t page, std::span<const uint8_t> payload) {
  const kernels::KvPoolShape& s = pool.shape();
  const int64_t n = rows_bytes(s);
  if (page < 0 || page >= s.n_pages)
    return Status(StatusCode::invalid_argument, "KV page " + std::to_string(page) +
                                                    " is outside a pool of " +
                                                    std::to_string(s.n_pages) + " pages");
  if (payload.size() != size_t(2 * n * s.n_layers))
    return Status(StatusCode::invalid_argument,
                  "KV block payload of " + std::to_string(payload.size()) +
                      " bytes, the pool's pages hold " + std::to_string(2 * n * s.n_layers));
  const uint8_t* src = payload.data();
  for (int l = 0; l < s.n_layers; ++l) {
    std::memcpy(static_cast<uint8_t*>(pool.k(l)) + page * n, src, size_t(n));
    std::memcpy(static_cast<uint8_t*>(pool.v(l)) + page * n, src + n, size_t(n));
    src += 2 * n;
  }
  return {};
}

}  // namespace rc::tiers
