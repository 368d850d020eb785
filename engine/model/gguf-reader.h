// A read-only GGUF v3 (and v2) file over mmap.
//
// Contract: open() validates the whole header before returning: every count,
// string length, array length, tensor shape, type, offset and size is checked
// against the bytes actually present, and no allocation is made whose size
// comes from the file without first checking that the file is large enough
// to hold that many items; counts are also capped (65536 keys, 2^20 tensors,
// 2^24 strings per array, 65536 nested arrays), so memory stays a small
// multiple of the real content. A corrupt or truncated file yields one Status
// (corrupt_data, or unsupported for a valid file using something RadixChat
// does not implement) naming what is wrong; it never crashes.
//
// Lifetime: strings (std::string_view), array payloads and tensor data point
// into the mapping, so they are valid as long as the GgufFile lives. A
// GgufFile is immutable after open() and may be read from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "dtype.h"
#include "radixchat/status.h"

namespace rc::model {

// Metadata value types; the values are GGUF's gguf_type ids.
enum class GgufType : uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};
const char* gguf_type_name(GgufType t);
// Bytes of one scalar of type t; 0 for string and array.
size_t gguf_scalar_size(GgufType t);

// An array value. Scalar elements stay in the file (little-endian, possibly
// unaligned) and are read with get<T>(i); strings and nested arrays are
// indexed at open().
struct GgufArray {
  GgufType elem_type = GgufType::u8;
  uint64_t count = 0;
  const uint8_t* scalars = nullptr;       // elem_type scalar: count * size bytes
  std::vector<std::string_view> strings;  // elem_type == string
  std::vector<GgufArray> arrays;          // elem_type == array

  // Element i of a scalar array whose elem_type matches T exactly.
  template <typename T>
  T get(uint64_t i) const {
    T v;
    std::memcpy(&v, scalars + i * sizeof(T), sizeof(T));
    return v;
  }
};

// One metadata value: the variant index equals the GgufType id.
using GgufValue = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string_view, GgufArray, uint64_t, int64_t, double>;
inline GgufType gguf_type_of(const GgufValue& v) { return static_cast<GgufType>(v.index()); }
// Short human-readable rendering ("[4096 strings]" for long arrays), for gguf-info.
std::string gguf_value_summary(const GgufValue& v, size_t max_items = 8);

struct GgufTensorInfo {
  std::string_view name;
  uint32_t type_id = 0;                       // the file's ggml type id
  bool supported = false;                     // type_id is a kernels::DType
  kernels::DType type = kernels::DType::f32;  // valid when supported
  int n_dims = 0;
  std::array<int64_t, 4> ne = {1, 1, 1, 1};  // GGUF order: ne[0] innermost; unused dims are 1
  uint64_t offset = 0;                       // relative to the data section
  uint64_t n_bytes = 0;                      // 0 when !supported
  const void* data = nullptr;                // nullptr when !supported

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  // "[4096, 32000]"
  std::string shape_string() const;
};

struct GgufOpenOptions {
  // Tensors of types RadixChat cannot compute with are normally an error
  // (listing the supported types). Tools that only need metadata (tokenize,
  // gguf-info) may allow them: such tensors are listed with supported=false
  // and no data, and their bytes are not bounds-checked.
  bool allow_unsupported_types = false;
};

class GgufFile {
 public:
  // Maps `path` read-only and validates it. not_found for a missing file.
  static Result<std::unique_ptr<GgufFile>> open(const std::string& path,
                                                const GgufOpenOptions& options = {});
  // Parses a buffer the caller keeps alive for the GgufFile's lifetime (fuzzing, tests).
  static Result<std::unique_ptr<GgufFile>> from_memory(std::span<const uint8_t> bytes,
                                                       const GgufOpenOptions& options = {});
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t file_size() const { return size_; }
  uint64_t data_offset() const { return data_offset_; }
  const std::string& path() const { return path_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string_view, GgufValue>>& metadata() const { return kv_; }
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed accessors. A missing key is not_found ("missing metadata key 'k'");
  // a key of the wrong type is corrupt_data naming both types. Integer
  // getters accept any integer type whose value fits (writers disagree on
  // widths); get_f32 accepts f32 and f64.
  Result<std::string_view> get_string(std::string_view key) const;
  Result<uint32_t> get_u32(std::string_view key) const;
  Result<int64_t> get_i64(std::string_view key) const;
  Result<float> get_f32(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  const GgufArray* find_array(std::string_view key) const;
  Result<std::vector<std::string_view>> get_string_array(std::string_view key) const;
  Result<std::vector<float>> get_f32_array(std::string_view key) const;
  Result<std::vector<int32_t>> get_i32_array(std::string_view key) const;
  // Same, with a default when the key is absent (a wrong type is still an error).
  Result<uint32_t> get_u32_or(std::string_view key, uint32_t fallback) const;
  Result<float> get_f32_or(std::string_view key, float fallback) const;
  Result<bool> get_bool_or(std::string_view key, bool fallback) const;
  Result<std::string_view> get_string_or(std::string_view key, std::string_view fallback) const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;

  // Hands the whole pages of [p, p + bytes) in the mapping back to the
  // kernel (a caller that has copied what it needs from them: the bytes no
  // longer count in the process's resident memory). Reading them again
  // re-reads the file, so every view stays valid. Does nothing for a
  // from_memory buffer or a range outside the mapping.
  void release_pages(const void* p, uint64_t bytes) const;

 private:
  GgufFile() = default;
  friend class GgufParser;

  std::string path_;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  void* mapping_ = nullptr;  // munmap on destruction when non-null
  uint32_t version_ = 0;
  uint32_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string_view, GgufValue>> kv_;
  std::unordered_map<std::string_view, size_t> kv_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string_view, size_t> tensor_index_;
};

// The name of any ggml type id ("Q5_K"), supported or not; "type 123" when unknown.
std::string ggml_type_name(uint32_t type_id);

}  // namespace rc::model
