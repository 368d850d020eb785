// Hand-built GGUF bytes for error-path tests: every field is written
// explicitly, so a test can put any (corrupt) value anywhere and know its
// offset.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/gguf-reader.h"

namespace rc::testing {

struct GgufBytes {
  std::vector<uint8_t> b;

  template <typename T>
  GgufBytes& put(T v) {
    const size_t at = b.size();
    b.resize(at + sizeof v);
    std::memcpy(b.data() + at, &v, sizeof v);
    return *this;
  }
  GgufBytes& u32(uint32_t v) { return put(v); }
  GgufBytes& u64(uint64_t v) { return put(v); }
  GgufBytes& str(std::string_view s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  GgufBytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    u32(0x46554747);
    u32(version);
    u64(n_tensors);
    return u64(n_kv);
  }
  GgufBytes& kv_u32(std::string_view key, uint32_t v) {
    str(key);
    u32(static_cast<uint32_t>(model::GgufType::u32));
    return u32(v);
  }
  GgufBytes& kv_str(std::string_view key, std::string_view v) {
    str(key);
    u32(static_cast<uint32_t>(model::GgufType::string));
    return str(v);
  }
  GgufBytes& tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type,
                    uint64_t offset) {
    str(name);
    u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    u32(type);
    return u64(offset);
  }
  GgufBytes& pad_to(size_t alignment) {
    b.resize((b.size() + alignment - 1) / alignment * alignment, 0);
    return *this;
  }
  GgufBytes& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
  std::span<const uint8_t> span() const { return {b.data(), b.size()}; }
};

}  // namespace rc::testing
