// Little-endian encoding of fixed-width fields, for the block format and
// the keyspace hash: the bytes do not depend on the host's byte order.
// ByteReader never reads past its span: a short read sets failed() and
// yields zeros, so a parser checks once at the end instead of per field.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace rc::tiers {

class ByteWriter {
 public:
  void bytes(std::string_view s) { out_.insert(out_.end(), s.begin(), s.end()); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(char(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(char(v >> (8 * i)));
  }
  void f32(float f) {
    uint32_t v;
    std::memcpy(&v, &f, 4);
    u32(v);
  }
  std::vector<char>& data() { return out_; }

 private:
  std::vector<char> out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}
  uint32_t u32() {
    uint32_t v = 0;
    if (!take(4)) return 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(in_[at_ - 4 + i]) << (8 * i);
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    if (!take(8)) return 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(in_[at_ - 8 + i]) << (8 * i);
    return v;
  }
  float f32() {
    uint32_t v = u32();
    float f;
    std::memcpy(&f, &v, 4);
    return f;
  }
  // n raw bytes, or an empty span (and failed()) when fewer remain.
  std::span<const uint8_t> raw(uint64_t n) {
    if (!take(n)) return {};
    return in_.subspan(at_ - n, n);
  }
  uint64_t remaining() const { return in_.size() - at_; }
  size_t offset() const { return at_; }
  bool failed() const { return failed_; }

 private:
  bool take(uint64_t n) {
    if (failed_ || n > in_.size() - at_) {
      failed_ = true;
      return false;
    }
    at_ += n;
    return true;
  }
  std::span<const uint8_t> in_;
  size_t at_ = 0;
  bool failed_ = false;
};

}  // namespace rc::tiers
