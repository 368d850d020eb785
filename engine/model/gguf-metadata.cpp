// Typed metadata accessors and names for GGUF files (see gguf-reader.h).
#include <cmath>
#include <limits>

#include "gguf-reader.h"

namespace rc::model {

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::u8:
      return "u8";
    case GgufType::i8:
      return "i8";
    case GgufType::u16:
      return "u16";
    case GgufType::i16:
      return "i16";
    case GgufType::u32:
      return "u32";
    case GgufType::i32:
      return "i32";
    case GgufType::f32:
      return "f32";
    case GgufType::boolean:
      return "bool";
    case GgufType::string:
      return "string";
    case GgufType::array:
      return "array";
    case GgufType::u64:
      return "u64";
    case GgufType::i64:
      return "i64";
    case GgufType::f64:
      return "f64";
  }
  return "unknown";
}

size_t gguf_scalar_size(GgufType t) {
  switch (t) {
    case GgufType::u8:
    case GgufType::i8:
    case GgufType::boolean:
      return 1;
    case GgufType::u16:
    case GgufType::i16:
      return 2;
    case GgufType::u32:
    case GgufType::i32:
    case GgufType::f32:
      return 4;
    case GgufType::u64:
    case GgufType::i64:
    case GgufType::f64:
      return 8;
    case GgufType::string:
    case GgufType::array:
      return 0;
  }
  return 0;
}

std::string ggml_type_name(uint32_t id) {
  // All ggml type ids, so an unsupported file names its type precisely.
  static const char* const kNames[] = {
      "F32",     "F16",    "Q4_0",    "Q4_1",  nullptr,  nullptr, "Q5_0",  "Q5_1",
      "Q8_0",    "Q8_1",   "Q2_K",    "Q3_K",  "Q4_K",   "Q5_K",  "Q6_K",  "Q8_K",
      "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
      "I8",      "I16",    "I32",     "I64",   "F64",    "IQ1_M", "BF16",  nullptr,
      nullptr,   nullptr,  "TQ1_0",   "TQ2_0", nullptr,  nullptr, nullptr, "MXFP4"};
  if (id < std::size(kNames) && kNames[id]) return kNames[id];
  return "type " + std::to_string(id);
}

std::string GgufTensorInfo::shape_string() const {
  std::string s = "[";
  for (int d = 0; d < n_dims; ++d) s += (d ? ", " : "") + std::to_string(ne[d]);
  return s + "]";
}

namespace {

std::string scalar_to_string(GgufType t, const uint8_t* p) {
  auto get = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case GgufType::u8:
      return std::to_string(get(uint8_t{}));
    case GgufType::i8:
      return std::to_string(get(int8_t{}));
    case GgufType::u16:
      return std::to_string(get(uint16_t{}));
    case GgufType::i16:
      return std::to_string(get(int16_t{}));
    case GgufType::u32:
      return std::to_string(get(uint32_t{}));
    case GgufType::i32:
      return std::to_string(get(int32_t{}));
    case GgufType::u64:
      return std::to_string(get(uint64_t{}));
    case GgufType::i64:
      return std::to_string(get(int64_t{}));
    case GgufType::boolean:
      return *p ? "true" : "false";
    case GgufType::f32: {
      char b[32];
      std::snprintf(b, sizeof b, "%g", static_cast<double>(get(float{})));
      return b;
    }
    case GgufType::f64: {
      char b[32];
      std::snprintf(b, sizeof b, "%g", get(double{}));
      return b;
    }
    default:
      return "?";
  }
}

std::string short_string(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < 60; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n')
      out += "\\n";
    else if (c == '"' || c == '\\')
      out += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else
      out += static_cast<char>(c);
  }
  return out + (s.size() > 60 ? "...\"" : "\"");
}

std::string array_summary(const GgufArray& a, size_t max_items) {
  std::string s = "[";
  const uint64_t shown = std::min<uint64_t>(a.count, max_items);
  for (uint64_t i = 0; i < shown; ++i) {
    if (i) s += ", ";
    if (a.elem_type == GgufType::string)
      s += short_string(a.strings[i]);
    else if (a.elem_type == GgufType::array)
      s += array_summary(a.arrays[i], max_items);
    else
      s += scalar_to_string(a.elem_type, a.scalars + i * gguf_scalar_size(a.elem_type));
  }
  if (a.count > shown)
    s += ", ... (" + std::to_string(a.count) + " " + gguf_type_name(a.elem_type) + ")";
  return s + "]";
}

Status wrong_type(std::string_view key, const GgufValue& v, const char* expected) {
  return Status(StatusCode::corrupt_data, "metadata '" + std::string(key) + "' is " +
                                              gguf_type_name(gguf_type_of(v)) + ", expected " +
                                              expected);
}

Status missing(std::string_view key) {
  return Status(StatusCode::not_found, "missing metadata key '" + std::string(key) + "'");
}

// Any integer value, widened; nullopt for non-integers.
std::optional<int64_t> as_int(const GgufValue& v, bool* too_big) {
  *too_big = false;
  switch (gguf_type_of(v)) {
    case GgufType::u8:
      return std::get<uint8_t>(v);
    case GgufType::i8:
      return std::get<int8_t>(v);
    case GgufType::u16:
      return std::get<uint16_t>(v);
    case GgufType::i16:
      return std::get<int16_t>(v);
    case GgufType::u32:
      return std::get<uint32_t>(v);
    case GgufType::i32:
      return std::get<int32_t>(v);
    case GgufType::i64:
      return std::get<int64_t>(v);
    case GgufType::u64: {
      const uint64_t u = std::get<uint64_t>(v);
      if (u > static_cast<uint64_t>(INT64_MAX)) *too_big = true;
      return static_cast<int64_t>(u);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string gguf_value_summary(const GgufValue& v, size_t max_items) {
  switch (gguf_type_of(v)) {
    case GgufType::string:
      return short_string(std::get<std::string_view>(v));
    case GgufType::array:
      return array_summary(std::get<GgufArray>(v), max_items);
    case GgufType::boolean:
      return std::get<bool>(v) ? "true" : "false";
    default: {
      uint8_t buf[8] = {};
      std::visit(
          [&buf](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_arithmetic_v<T>) std::memcpy(buf, &x, sizeof x);
          },
          v);
      return scalar_to_string(gguf_type_of(v), buf);
    }
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Result<std::string_view> GgufFile::get_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return missing(key);
  if (const auto* s = std::get_if<std::string_view>(v)) return *s;
  return wrong_type(key, *v, "string");
}

Result<int64_t> GgufFile::get_i64(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return missing(key);
  bool too_big = false;
  std::optional<int64_t> i = as_int(*v, &too_big);
  if (!i) return wrong_type(key, *v, "an integer");
  if (too_big)
    return Status(StatusCode::corrupt_data, "metadata '" + std::string(key) + "' is out of range");
  return *i;
}

Result<uint32_t> GgufFile::get_u32(std::string_view key) const {
  Result<int64_t> i = get_i64(key);
  if (!i.ok()) return i.status();
  if (*i < 0 || *i > static_cast<int64_t>(UINT32_MAX)) {
    return Status(StatusCode::corrupt_data, "metadata '" + std::string(key) + "' = " +
                                                std::to_string(*i) + " is out of range for u32");
  }
  return static_cast<uint32_t>(*i);
}

Result<float> GgufFile::get_f32(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return missing(key);
  if (const auto* f = std::get_if<float>(v)) return *f;
  if (const auto* d = std::get_if<double>(v)) return static_cast<float>(*d);
  return wrong_type(key, *v, "f32");
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return missing(key);
  if (const auto* b = std::get_if<bool>(v)) return *b;
  return wrong_type(key, *v, "bool");
}

const GgufArray* GgufFile::find_array(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? std::get_if<GgufArray>(v) : nullptr;
}

Result<std::vector<std::string_view>> GgufFile::get_string_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return missing(key);
  const GgufArray* a = std::get_if<GgufArray>(v);
  if (!a || a->elem_type != GgufType::string) return wrong_type(key, *v, "array of strings");
  return a->strings;
}

Result<std::vector<float>> GgufFile::get_f32_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return missing(key);
  const GgufArray* a = std::get_if<GgufArray>(v);
  if (!a || (a->elem_type != GgufType::f32 && a->elem_type != GgufType::f64)) {
    return wrong_type(key, *v, "array of f32");
  }
  std::vector<float> out(a->count);
  for (uint64_t i = 0; i < a->count; ++i) {
    out[i] =
        a->elem_type == GgufType::f32 ? a->get<float>(i) : static_cast<float>(a->get<double>(i));
  }
  return out;
}

Result<std::vector<int32_t>> GgufFile::get_i32_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return missing(key);
  const GgufArray* a = std::get_if<GgufArray>(v);
  if (!a) return wrong_type(key, *v, "array of i32");
  std::vector<int32_t> out(a->count);
  for (uint64_t i = 0; i < a->count; ++i) {
    int64_t x = 0;
    switch (a->elem_type) {
      case GgufType::u8:
        x = a->get<uint8_t>(i);
        break;
      case GgufType::i8:
        x = a->get<int8_t>(i);
        break;
      case GgufType::u16:
        x = a->get<uint16_t>(i);
        break;
      case GgufType::i16:
        x = a->get<int16_t>(i);
        break;
      case GgufType::u32:
        x = a->get<uint32_t>(i);
        break;
      case GgufType::i32:
        x = a->get<int32_t>(i);
        break;
      case GgufType::i64:
        x = a->get<int64_t>(i);
        break;
      case GgufType::u64: {
        const uint64_t u = a->get<uint64_t>(i);
        x = u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
        break;
      }
      default:
        return wrong_type(key, *v, "array of i32");
    }
    if (x < INT32_MIN || x > INT32_MAX) {
      return Status(StatusCode::corrupt_data, "metadata '" + std::string(key) + "'[" +
                                                  std::to_string(i) + "] is out of range for i32");
    }
    out[i] = static_cast<int32_t>(x);
  }
  return out;
}

Result<uint32_t> GgufFile::get_u32_or(std::string_view key, uint32_t fallback) const {
  return has(key) ? get_u32(key) : Result<uint32_t>(fallback);
}
Result<float> GgufFile::get_f32_or(std::string_view key, float fallback) const {
  return has(key) ? get_f32(key) : Result<float>(fallback);
}
Result<bool> GgufFile::get_bool_or(std::string_view key, bool fallback) const {
  return has(key) ? get_bool(key) : Result<bool>(fallback);
}
Result<std::string_view> GgufFile::get_string_or(std::string_view key,
                                                 std::string_view fallback) const {
  return has(key) ? get_string(key) : Result<std::string_view>(fallback);
}

}  // namespace rc::model
