#include "tiers/model-fingerprint.h"

#include <xxhash.h>

#include <cstring>
#include <memory>

namespace rc::tiers {

namespace {

struct State {
  XXH3_state_t* s = XXH3_createState();
  ~State() { XXH3_freeState(s); }
  void add(const void* p, size_t n) { XXH3_128bits_update(s, p, n); }
  void u64(uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = uint8_t(v >> (8 * i));
    add(b, 8);
  }
  void str(std::string_view v) {
    u64(v.size());
    add(v.data(), v.size());
  }
};

void add_array(State& st, const model::GgufArray& a) {
  st.u64(uint64_t(a.elem_type));
  st.u64(a.count);
  if (a.elem_type == model::GgufType::string) {
    for (std::string_view s : a.strings) st.str(s);
  } else if (a.elem_type == model::GgufType::array) {
    for (const model::GgufArray& inner : a.arrays) add_array(st, inner);
  } else {
    st.add(a.scalars, a.count * model::gguf_scalar_size(a.elem_type));
  }
}

void add_value(State& st, const model::GgufValue& v) {
  st.u64(v.index());
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string_view>) {
          st.str(x);
        } else if constexpr (std::is_same_v<T, model::GgufArray>) {
          add_array(st, x);
        } else {
          // Scalars by their value bytes; x86 and arm64 are little-endian.
          st.add(&x, sizeof x);
        }
      },
      v);
}

bool keyed_out(std::string_view key) {
  if (key == "general.architecture") return false;
  return key.starts_with("general.") || key.starts_with("tokenizer.");
}

}  // namespace

Hash128 model_fingerprint(const model::GgufFile& file) {
  State st;
  XXH3_128bits_reset(st.s);
  st.str("rc-model-1");
  for (const auto& [key, value] : file.metadata()) {
    if (keyed_out(key)) continue;
    st.str(key);
    add_value(st, value);
  }
  for (const model::GgufTensorInfo& t : file.tensors()) {
    st.str(t.name);
    st.u64(t.type_id);
    for (int64_t n : t.ne) st.u64(uint64_t(n));
    st.u64(t.n_bytes);
    if (t.data != nullptr) st.add(t.data, t.n_bytes);
  }
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st.s));
  Hash128 h;
  std::memcpy(h.bytes.data(), c.digest, 16);
  return h;
}

}  // namespace rc::tiers
