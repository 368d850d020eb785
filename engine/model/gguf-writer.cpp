#include "gguf-writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "rc-assert.h"

namespace rc::model {

namespace {

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

void put_string(std::vector<uint8_t>& out, std::string_view s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

uint64_t tensor_bytes(kernels::DType type, const std::vector<int64_t>& ne) {
  RC_ASSERT(!ne.empty() && ne.size() <= 4);
  uint64_t n = 1;
  for (int64_t d : ne) {
    RC_ASSERT(d >= 0);
    n *= static_cast<uint64_t>(d);
  }
  RC_ASSERT_MSG(ne[0] % kernels::block_elems(type) == 0, "ne[0] must be a multiple of the block");
  return n / kernels::block_elems(type) * kernels::block_bytes(type);
}

}  // namespace

GgufOwnedValue GgufOwnedValue::string(std::string_view s) {
  GgufOwnedValue o;
  o.type_ = GgufType::string;
  put_string(o.payload_, s);
  return o;
}

GgufOwnedValue GgufOwnedValue::array(GgufType elem, const std::vector<GgufOwnedValue>& items) {
  GgufOwnedValue o;
  o.type_ = GgufType::array;
  put<uint32_t>(o.payload_, static_cast<uint32_t>(elem));
  put<uint64_t>(o.payload_, items.size());
  for (const GgufOwnedValue& it : items) {
    RC_ASSERT_MSG(it.type_ == elem, "array items must all have the array's element type");
    o.payload_.insert(o.payload_.end(), it.payload_.begin(), it.payload_.end());
  }
  return o;
}

GgufOwnedValue GgufOwnedValue::strings(const std::vector<std::string>& items) {
  GgufOwnedValue o;
  o.type_ = GgufType::array;
  put<uint32_t>(o.payload_, static_cast<uint32_t>(GgufType::string));
  put<uint64_t>(o.payload_, items.size());
  for (const std::string& s : items) put_string(o.payload_, s);
  return o;
}

GgufOwnedValue GgufOwnedValue::f32s(const std::vector<float>& items) {
  GgufOwnedValue o;
  o.type_ = GgufType::array;
  put<uint32_t>(o.payload_, static_cast<uint32_t>(GgufType::f32));
  put<uint64_t>(o.payload_, items.size());
  for (float f : items) put(o.payload_, f);
  return o;
}

GgufOwnedValue GgufOwnedValue::i32s(const std::vector<int32_t>& items) {
  GgufOwnedValue o;
  o.type_ = GgufType::array;
  put<uint32_t>(o.payload_, static_cast<uint32_t>(GgufType::i32));
  put<uint64_t>(o.payload_, items.size());
  for (int32_t v : items) put(o.payload_, v);
  return o;
}

void GgufWriter::set(const std::string& key, GgufOwnedValue value) {
  for (auto& kv : kv_) {
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  }
  kv_.emplace_back(key, std::move(value));
}

void GgufWriter::set_alignment(uint32_t alignment) {
  RC_ASSERT(alignment != 0 && (alignment & (alignment - 1)) == 0);
  alignment_ = alignment;
  set_u32("general.alignment", alignment);
}

void GgufWriter::add_tensor(const std::string& name, kernels::DType type, std::vector<int64_t> ne,
                            std::vector<uint8_t> data) {
  const uint64_t n = tensor_bytes(type, ne);
  RC_ASSERT_MSG(data.size() == n, "tensor data size does not match its shape and type");
  tensors_.push_back({name, static_cast<uint32_t>(type), std::move(ne), n, std::move(data), {}});
}

void GgufWriter::add_tensor_fill(const std::string& name, kernels::DType type,
                                 std::vector<int64_t> ne,
                                 std::function<void(uint8_t*, size_t)> fill) {
  const uint64_t n = tensor_bytes(type, ne);
  tensors_.push_back({name, static_cast<uint32_t>(type), std::move(ne), n, {}, std::move(fill)});
}

void GgufWriter::add_raw_tensor(const std::string& name, uint32_t type_id, std::vector<int64_t> ne,
                                std::vector<uint8_t> data) {
  const uint64_t n = data.size();
  tensors_.push_back({name, type_id, std::move(ne), n, std::move(data), {}});
}

bool GgufWriter::remove_tensor(const std::string& name) {
  for (auto it = tensors_.begin(); it != tensors_.end(); ++it) {
    if (it->name == name) {
      tensors_.erase(it);
      return true;
    }
  }
  return false;
}

std::vector<uint8_t> GgufWriter::header(std::vector<uint64_t>* offsets) const {
  std::vector<uint8_t> out;
  put<uint32_t>(out, 0x46554747);  // "GGUF"
  put<uint32_t>(out, version_);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, kv_.size());
  for (const auto& [key, value] : kv_) {
    put_string(out, key);
    put<uint32_t>(out, static_cast<uint32_t>(value.type()));
    out.insert(out.end(), value.payload().begin(), value.payload().end());
  }
  uint64_t offset = 0;
  offsets->clear();
  for (const Tensor& t : tensors_) {
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) put<uint64_t>(out, static_cast<uint64_t>(d));
    put<uint32_t>(out, t.type_id);
    put<uint64_t>(out, offset);
    offsets->push_back(offset);
    offset += (t.n_bytes + alignment_ - 1) / alignment_ * alignment_;
  }
  out.resize((out.size() + alignment_ - 1) / alignment_ * alignment_, 0);
  return out;
}

std::vector<uint8_t> GgufWriter::serialize() const {
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> out = header(&offsets);
  const size_t data_start = out.size();
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    out.resize(data_start + offsets[i], 0);
    if (t.fill) {
      out.resize(data_start + offsets[i] + t.n_bytes);
      t.fill(out.data() + data_start + offsets[i], t.n_bytes);
    } else {
      out.insert(out.end(), t.data.begin(), t.data.end());
    }
  }
  // Pad the last tensor too, as the reference writer does.
  out.resize((out.size() + alignment_ - 1) / alignment_ * alignment_, 0);
  return out;
}

Status GgufWriter::write_file(const std::string& path) const {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return Status(StatusCode::invalid_argument, path + ": " + std::strerror(errno));
  auto io_error = [&] {
    return Status(StatusCode::internal, path + ": write failed: " + std::strerror(errno));
  };
  std::vector<uint64_t> offsets;
  const std::vector<uint8_t> head = header(&offsets);
  if (std::fwrite(head.data(), 1, head.size(), f.get()) != head.size()) return io_error();
  uint64_t written = 0;  // bytes of the data section so far
  std::vector<uint8_t> buf;
  const std::vector<uint8_t> zeros(alignment_, 0);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    const uint64_t pad = offsets[i] - written;
    if (pad && std::fwrite(zeros.data(), 1, pad, f.get()) != pad) return io_error();
    const uint8_t* src = t.data.data();
    if (t.fill) {
      buf.assign(t.n_bytes, 0);
      t.fill(buf.data(), buf.size());
      src = buf.data();
    }
    if (t.n_bytes && std::fwrite(src, 1, t.n_bytes, f.get()) != t.n_bytes) return io_error();
    written = offsets[i] + t.n_bytes;
  }
  const uint64_t tail = (alignment_ - written % alignment_) % alignment_;
  if (tail && std::fwrite(zeros.data(), 1, tail, f.get()) != tail) return io_error();
  if (std::fflush(f.get()) != 0) return io_error();
  return {};
}

}  // namespace rc::model
