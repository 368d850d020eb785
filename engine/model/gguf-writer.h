// Writes GGUF v3 files: metadata of every type (nested arrays included) and
// tensors of every supported type, with alignment padding. Used by tests and
// tools (make-random-gguf) to build models of any shape; it is not on the
// inference path. Tensor data is either given as bytes or produced by a fill
// callback at write time, so multi-GB files are written one tensor at a time.
//
// Misuse (an array mixing element types, bytes of the wrong size) is a
// programming error and trips RC_ASSERT; I/O failures are Status values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dtype.h"
#include "gguf-reader.h"
#include "radixchat/status.h"

namespace rc::model {

// An owned metadata value, stored as its GGUF payload encoding.
class GgufOwnedValue {
 public:
  static GgufOwnedValue u8(uint8_t v) { return scalar(GgufType::u8, v); }
  static GgufOwnedValue i8(int8_t v) { return scalar(GgufType::i8, v); }
  static GgufOwnedValue u16(uint16_t v) { return scalar(GgufType::u16, v); }
  static GgufOwnedValue i16(int16_t v) { return scalar(GgufType::i16, v); }
  static GgufOwnedValue u32(uint32_t v) { return scalar(GgufType::u32, v); }
  static GgufOwnedValue i32(int32_t v) { return scalar(GgufType::i32, v); }
  static GgufOwnedValue u64(uint64_t v) { return scalar(GgufType::u64, v); }
  static GgufOwnedValue i64(int64_t v) { return scalar(GgufType::i64, v); }
  static GgufOwnedValue f32(float v) { return scalar(GgufType::f32, v); }
  static GgufOwnedValue f64(double v) { return scalar(GgufType::f64, v); }
  static GgufOwnedValue boolean(bool v) { return scalar(GgufType::boolean, uint8_t(v ? 1 : 0)); }
  static GgufOwnedValue string(std::string_view s);
  // An array whose items all have type elem (items may themselves be arrays).
  static GgufOwnedValue array(GgufType elem, const std::vector<GgufOwnedValue>& items);
  static GgufOwnedValue strings(const std::vector<std::string>& items);
  static GgufOwnedValue f32s(const std::vector<float>& items);
  static GgufOwnedValue i32s(const std::vector<int32_t>& items);

  GgufType type() const { return type_; }
  const std::vector<uint8_t>& payload() const { return payload_; }

 private:
  template <typename T>
  static GgufOwnedValue scalar(GgufType t, T v) {
    GgufOwnedValue o;
    o.type_ = t;
    o.payload_.resize(sizeof v);
    std::memcpy(o.payload_.data(), &v, sizeof v);
    return o;
  }
  GgufType type_ = GgufType::u8;
  std::vector<uint8_t> payload_;
};

class GgufWriter {
 public:
  // Sets (or replaces) a key; keys are written in first-set order.
  void set(const std::string& key, GgufOwnedValue value);
  void set_u32(const std::string& key, uint32_t v) { set(key, GgufOwnedValue::u32(v)); }
  void set_f32(const std::string& key, float v) { set(key, GgufOwnedValue::f32(v)); }
  void set_bool(const std::string& key, bool v) { set(key, GgufOwnedValue::boolean(v)); }
  void set_string(const std::string& key, std::string_view v) {
    set(key, GgufOwnedValue::string(v));
  }
  // Also writes general.alignment (u32). Must be a power of two.
  void set_alignment(uint32_t alignment);
  uint32_t alignment() const { return alignment_; }

  // ne in GGUF order (ne[0] innermost). data must be exactly the tensor's byte size.
  void add_tensor(const std::string& name, kernels::DType type, std::vector<int64_t> ne,
                  std::vector<uint8_t> data);
  // Same, data produced at write time into a buffer of the tensor's byte size.
  void add_tensor_fill(const std::string& name, kernels::DType type, std::vector<int64_t> ne,
                       std::function<void(uint8_t* dst, size_t n_bytes)> fill);
  // Any ggml type id with explicit bytes (for tests of unsupported types).
  void add_raw_tensor(const std::string& name, uint32_t type_id, std::vector<int64_t> ne,
                      std::vector<uint8_t> data);
  size_t n_tensors() const { return tensors_.size(); }
  // Drops a tensor added earlier (tests build variants of a model this way).
  bool remove_tensor(const std::string& name);

  // For tests of the reader's version checks; normally 3.
  void set_version(uint32_t v) { version_ = v; }

  std::vector<uint8_t> serialize() const;
  Status write_file(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    uint32_t type_id = 0;
    std::vector<int64_t> ne;
    uint64_t n_bytes = 0;
    std::vector<uint8_t> data;
    std::function<void(uint8_t*, size_t)> fill;
  };
  // Header + metadata + tensor infos + padding, and each tensor's offset.
  std::vector<uint8_t> header(std::vector<uint64_t>* offsets) const;

  uint32_t version_ = 3;
  uint32_t alignment_ = 32;
  std::vector<std::pair<std::string, GgufOwnedValue>> kv_;
  std::vector<Tensor> tensors_;
};

}  // namespace rc::model
