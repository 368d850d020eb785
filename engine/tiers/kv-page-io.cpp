#include "tiers/kv-page-io.h"

#include <string>

namespace rc::tiers {

namespace {

// Bytes of one token's K (or V) row in one layer.
int64_t row_bytes(const kernels::KvPoolShape& s) {
  return int64_t(s.n_kv_heads) * s.head_dim * kernels::kv_elem_bytes(s.type);
}

bool pages_in_range(const kernels::KvPoolShape& s, std::span<const int32_t> pages) {
  for (int32_t p : pages) {
    if (p < 0 || p >= s.n_pages) return false;
  }
  return true;
}

// Calls f(first index, run length) for each run of consecutive page ids,
// so adjacent pages move in one copy.
template <typename F>
void for_each_run(std::span<const int32_t> pages, F f) {
  for (size_t i = 0; i < pages.size();) {
    size_t n = 1;
    while (i + n < pages.size() && pages[i + n] == pages[i] + int32_t(n)) ++n;
    f(i, n);
    i += n;
  }
}

}  // namespace

std::vector<uint8_t> pack_block(kernels::Backend& backend, kernels::KvPool& pool,
                                std::span<const int32_t> pages) {
  const kernels::KvPoolShape& s = pool.shape();
  if (!pages_in_range(s, pages)) return {};
  const int64_t page_bytes = s.page_size * row_bytes(s);
  const int64_t half = page_bytes * int64_t(pages.size());  // one layer's K (or V)
  std::vector<uint8_t> out(size_t(2 * half * s.n_layers));
  uint8_t* dst = out.data();
  for (int l = 0; l < s.n_layers; ++l) {
    const auto* k = static_cast<const uint8_t*>(pool.k(l));
    const auto* v = static_cast<const uint8_t*>(pool.v(l));
    for_each_run(pages, [&](size_t i, size_t n) {
      backend.download(dst + i * page_bytes, k + pages[i] * page_bytes, n * page_bytes);
      backend.download(dst + half + i * page_bytes, v + pages[i] * page_bytes, n * page_bytes);
    });
    dst += 2 * half;
  }
  return out;
}

Status unpack_block(kernels::Backend& backend, kernels::KvPool& pool,
                    std::span<const int32_t> pages, std::span<const uint8_t> payload,
                    int block_tokens, int skip_tokens) {
  const kernels::KvPoolShape& s = pool.shape();
  const int64_t row = row_bytes(s), page_bytes = s.page_size * row;
  if (!pages_in_range(s, pages))
    return Status(StatusCode::invalid_argument,
                  "a KV page is outside a pool of " + std::to_string(s.n_pages) + " pages");
  if (block_tokens <= 0 || skip_tokens < 0 || skip_tokens % s.page_size != 0 ||
      int64_t(pages.size()) * s.page_size != block_tokens - skip_tokens)
    return Status(StatusCode::invalid_argument, std::to_string(pages.size()) +
                                                    " pages do not hold tokens " +
                                                    std::to_string(skip_tokens) + ".." +
                                                    std::to_string(block_tokens) + " of a block");
  const int64_t half = row * block_tokens;
  if (payload.size() != size_t(2 * half * s.n_layers))
    return Status(StatusCode::invalid_argument,
                  "KV block payload of " + std::to_string(payload.size()) + " bytes, the pool's " +
                      std::to_string(block_tokens) + "-token blocks hold " +
                      std::to_string(2 * half * s.n_layers));
  const uint8_t* src = payload.data() + skip_tokens * row;
  for (int l = 0; l < s.n_layers; ++l) {
    auto* k = static_cast<uint8_t*>(pool.k(l));
    auto* v = static_cast<uint8_t*>(pool.v(l));
    for_each_run(pages, [&](size_t i, size_t n) {
      backend.upload(k + pages[i] * page_bytes, src + i * page_bytes, n * page_bytes);
      backend.upload(v + pages[i] * page_bytes, src + half + i * page_bytes, n * page_bytes);
    });
    src += 2 * half;
  }
  return {};
}

}  // namespace rc::tiers
