// GGUF parsing and validation. Every read goes through Cursor, which checks
// the bytes exist before touching them; every count read from the file is
// compared with the bytes left before anything is allocated for it, so the
// memory used is bounded by a small multiple of the file size.
#include "gguf-reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

namespace rc::model {

static_assert(std::endian::native == std::endian::little,
              "GGUF scalars are read in place: little-endian hosts only");

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr int kMaxArrayDepth = 8;        // recursion bound for nested arrays
// Nested arrays cost ~70 bytes of memory per 12 file bytes; real files have
// few or none (llama.cpp does not even read them), so their total is capped.
constexpr uint64_t kMaxNestedArrays = 1 << 16;
// Parsed entries cost several times their file bytes, so counts are also
// capped far above what real files use (~100 keys, a few thousand tensors,
// vocabularies of up to ~256k strings).
constexpr uint64_t kMaxKeys = 1 << 16;
constexpr uint64_t kMaxTensors = 1 << 20;
constexpr uint64_t kMaxStrings = 1 << 24;
// Smallest possible encodings, used to reject impossible counts up front.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;  // key length, type, u8 value
constexpr uint64_t kMinTensorInfoBytes =
    8 + 4 + 8 + 4 + 8;  // name len, n_dims, 1 dim, type, offset

Status corrupt(std::string msg) { return Status(StatusCode::corrupt_data, std::move(msg)); }

std::string quoted(std::string_view s) {
  // Names come from untrusted files: cap and escape them for one-line messages.
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > 80) out += "...";
  return out + "'";
}

bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
bool checked_add(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

}  // namespace

// Bounds-checked sequential reader over the file bytes.
class GgufParser {
 public:
  GgufParser(GgufFile& f, const GgufOpenOptions& o) : f_(f), opt_(o) {}
  Status parse();

 private:
  uint64_t left() const { return f_.size_ - pos_; }
  Status need(uint64_t n, const std::string& what) const {
    if (n <= left()) return {};
    return corrupt("truncated: " + what + " needs " + std::to_string(n) + " bytes at offset " +
                   std::to_string(pos_) + ", file size " + std::to_string(f_.size_));
  }
  template <typename T>
  Status read(T* out, const std::string& what) {
    if (Status s = need(sizeof(T), what); !s.ok()) return s;
    std::memcpy(out, f_.base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return {};
  }
  Status read_string(std::string_view* out, const std::string& what);
  Status read_value(GgufType type, GgufValue* out, const std::string& what, int depth);
  Status read_array(GgufArray* out, const std::string& what, int depth);
  Status read_header(uint64_t* n_tensors, uint64_t* n_kv);
  Status read_metadata(uint64_t n_kv);
  Status read_alignment();
  Status read_tensor_info(uint64_t index);
  Status check_tensor_data();

  GgufFile& f_;
  const GgufOpenOptions& opt_;
  uint64_t pos_ = 0;
  uint64_t nested_ = 0;  // nested arrays read so far
};

Status GgufParser::read_string(std::string_view* out, const std::string& what) {
  uint64_t len = 0;
  if (Status s = read(&len, what + " length"); !s.ok()) return s;
  if (len > left()) {
    return corrupt(what + ": string length " + std::to_string(len) + " at offset " +
                   std::to_string(pos_ - 8) + " runs past end of file (size " +
                   std::to_string(f_.size_) + ")");
  }
  *out = std::string_view(reinterpret_cast<const char*>(f_.base_ + pos_), len);
  pos_ += len;
  return {};
}

Status GgufParser::read_array(GgufArray* out, const std::string& what, int depth) {
  if (depth >= kMaxArrayDepth) {
    return corrupt(what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
  }
  uint32_t type = 0;
  if (Status s = read(&type, what + " element type"); !s.ok()) return s;
  if (type > static_cast<uint32_t>(GgufType::f64)) {
    return corrupt(what + ": unknown array element type " + std::to_string(type));
  }
  out->elem_type = static_cast<GgufType>(type);
  if (Status s = read(&out->count, what + " count"); !s.ok()) return s;
  // The smallest encoding of one element bounds how many can fit.
  const size_t scalar = gguf_scalar_size(out->elem_type);
  const uint64_t min_elem = scalar ? scalar : (out->elem_type == GgufType::string ? 8 : 12);
  if (out->count > left() / min_elem) {
    return corrupt(what + ": array of " + std::to_string(out->count) + " " +
                   gguf_type_name(out->elem_type) + " values cannot fit in the " +
                   std::to_string(left()) + " bytes left (file size " + std::to_string(f_.size_) +
                   ")");
  }
  if (scalar) {
    out->scalars = f_.base_ + pos_;
    pos_ += out->count * scalar;
    if (out->elem_type == GgufType::boolean) {
      // Reading a byte other than 0/1 as bool is undefined: reject it here.
      for (uint64_t i = 0; i < out->count; ++i) {
        if (out->scalars[i] > 1)
          return corrupt(what + "[" + std::to_string(i) + "]: bool value " +
                         std::to_string(out->scalars[i]) + " is not 0 or 1");
      }
    }
  } else if (out->elem_type == GgufType::string) {
    if (out->count > kMaxStrings) {
      return corrupt(what + ": array of " + std::to_string(out->count) +
                     " strings is over the limit of " + std::to_string(kMaxStrings));
    }
    out->strings.resize(out->count);
    for (uint64_t i = 0; i < out->count; ++i) {
      if (Status s = read_string(&out->strings[i], what + "[" + std::to_string(i) + "]"); !s.ok())
        return s;
    }
  } else {
    nested_ += out->count;
    if (nested_ > kMaxNestedArrays) {
      return corrupt(what + ": more than " + std::to_string(kMaxNestedArrays) +
                     " nested arrays in the file");
    }
    out->arrays.resize(out->count);
    for (uint64_t i = 0; i < out->count; ++i) {
      if (Status s = read_array(&out->arrays[i], what + "[" + std::to_string(i) + "]", depth + 1);
          !s.ok())
        return s;
    }
  }
  return {};
}

Status GgufParser::read_value(GgufType type, GgufValue* out, const std::string& what, int depth) {
  switch (type) {
#define RC_SCALAR(T, G)                                \
  case GgufType::G: {                                  \
    T v{};                                             \
    if (Status s = read(&v, what); !s.ok()) return s;  \
    out->emplace<static_cast<size_t>(GgufType::G)>(v); \
    return {};                                         \
  }
    RC_SCALAR(uint8_t, u8)
    RC_SCALAR(int8_t, i8)
    RC_SCALAR(uint16_t, u16)
    RC_SCALAR(int16_t, i16)
    RC_SCALAR(uint32_t, u32)
    RC_SCALAR(int32_t, i32)
    RC_SCALAR(float, f32)
    RC_SCALAR(uint64_t, u64)
    RC_SCALAR(int64_t, i64)
    RC_SCALAR(double, f64)
#undef RC_SCALAR
    case GgufType::boolean: {
      uint8_t b = 0;
      if (Status s = read(&b, what); !s.ok()) return s;
      if (b > 1) return corrupt(what + ": bool value " + std::to_string(b) + " is not 0 or 1");
      out->emplace<bool>(b != 0);
      return {};
    }
    case GgufType::string: {
      std::string_view sv;
      if (Status s = read_string(&sv, what); !s.ok()) return s;
      out->emplace<std::string_view>(sv);
      return {};
    }
    case GgufType::array: {
      GgufArray a;
      if (Status s = read_array(&a, what, depth); !s.ok()) return s;
      out->emplace<GgufArray>(std::move(a));
      return {};
    }
  }
  return corrupt(what + ": unknown value type " + std::to_string(static_cast<uint32_t>(type)));
}

Status GgufParser::read_header(uint64_t* n_tensors, uint64_t* n_kv) {
  if (f_.size_ < 4) {
    return corrupt("file is too small to be GGUF (" + std::to_string(f_.size_) + " bytes)");
  }
  uint32_t magic = 0;
  (void)read(&magic, "magic");
  if (magic != kMagic) {
    char buf[64];
    std::snprintf(buf, sizeof buf,
                  "not a GGUF file (magic bytes %02x %02x %02x %02x, expected 'GGUF')", f_.base_[0],
                  f_.base_[1], f_.base_[2], f_.base_[3]);
    return corrupt(buf);
  }
  if (Status s = read(&f_.version_, "version"); !s.ok()) return s;
  const uint32_t v = f_.version_;
  if (v == 1) {
    return Status(StatusCode::unsupported,
                  "GGUF version 1 is not supported (only 2 and 3); "
                  "reconvert the model with a current tool");
  }
  if (v == 0x02000000u || v == 0x03000000u) {
    return Status(StatusCode::unsupported, "big-endian GGUF files are not supported");
  }
  if (v != 2 && v != 3) return corrupt("unknown GGUF version " + std::to_string(v));
  if (Status s = read(n_tensors, "tensor count"); !s.ok()) return s;
  if (Status s = read(n_kv, "metadata count"); !s.ok()) return s;
  uint64_t min_bytes = 0, a = 0, b = 0;
  if (!checked_mul(*n_kv, kMinKvBytes, &a) || !checked_mul(*n_tensors, kMinTensorInfoBytes, &b) ||
      !checked_add(a, b, &min_bytes) || min_bytes > left()) {
    return corrupt("header claims " + std::to_string(*n_tensors) + " tensors and " +
                   std::to_string(*n_kv) + " metadata keys, impossible in a file of " +
                   std::to_string(f_.size_) + " bytes");
  }
  if (*n_kv > kMaxKeys || *n_tensors > kMaxTensors) {
    return corrupt("header claims " + std::to_string(*n_tensors) + " tensors and " +
                   std::to_string(*n_kv) + " metadata keys (limits: " +
                   std::to_string(kMaxTensors) + " and " + std::to_string(kMaxKeys) + ")");
  }
  return {};
}

Status GgufParser::read_metadata(uint64_t n_kv) {
  f_.kv_.reserve(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string where = "metadata key #" + std::to_string(i);
    std::string_view key;
    if (Status s = read_string(&key, where); !s.ok()) return s;
    const std::string what = "metadata " + quoted(key);
    uint32_t type = 0;
    if (Status s = read(&type, what + " type"); !s.ok()) return s;
    if (type > static_cast<uint32_t>(GgufType::f64)) {
      return corrupt(what + ": unknown value type " + std::to_string(type));
    }
    GgufValue value;
    if (Status s = read_value(static_cast<GgufType>(type), &value, what, 0); !s.ok()) return s;
    if (!f_.kv_index_.emplace(key, f_.kv_.size()).second) {
      return corrupt("duplicate metadata key " + quoted(key));
    }
    f_.kv_.emplace_back(key, std::move(value));
  }
  return {};
}

Status GgufParser::read_alignment() {
  const GgufValue* v = f_.find("general.alignment");
  if (!v) return {};
  const uint32_t* a = std::get_if<uint32_t>(v);
  if (!a) {
    return corrupt(std::string("metadata 'general.alignment' is ") +
                   gguf_type_name(gguf_type_of(*v)) + ", expected u32");
  }
  if (*a == 0 || (*a & (*a - 1)) != 0) {
    return corrupt("general.alignment " + std::to_string(*a) + " is not a power of two");
  }
  f_.alignment_ = *a;
  return {};
}

Status GgufParser::read_tensor_info(uint64_t index) {
  GgufTensorInfo t;
  if (Status s = read_string(&t.name, "tensor #" + std::to_string(index) + " name"); !s.ok())
    return s;
  const std::string what = "tensor " + quoted(t.name);
  uint32_t n_dims = 0;
  if (Status s = read(&n_dims, what + " n_dims"); !s.ok()) return s;
  if (n_dims < 1 || n_dims > 4) {
    return corrupt(what + ": n_dims " + std::to_string(n_dims) + " is outside 1..4");
  }
  t.n_dims = static_cast<int>(n_dims);
  uint64_t n_elems = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    uint64_t ne = 0;
    if (Status s = read(&ne, what + " dims"); !s.ok()) return s;
    if (ne > static_cast<uint64_t>(INT64_MAX) || !checked_mul(n_elems, ne, &n_elems) ||
        n_elems > static_cast<uint64_t>(INT64_MAX)) {
      return corrupt(what + ": shape overflows (dimension " + std::to_string(d) + " is " +
                     std::to_string(ne) + ")");
    }
    t.ne[d] = static_cast<int64_t>(ne);
  }
  if (Status s = read(&t.type_id, what + " type"); !s.ok()) return s;
  if (Status s = read(&t.offset, what + " offset"); !s.ok()) return s;

  if (std::optional<kernels::DType> dt = kernels::dtype_from_gguf(t.type_id)) {
    t.supported = true;
    t.type = *dt;
    const uint64_t be = static_cast<uint64_t>(kernels::block_elems(t.type));
    if (static_cast<uint64_t>(t.ne[0]) % be != 0) {
      return corrupt(what + ": row length ne[0]=" + std::to_string(t.ne[0]) +
                     " is not a multiple of " + kernels::dtype_name(t.type) + "'s block of " +
                     std::to_string(be));
    }
    if (!checked_mul(n_elems / be, static_cast<uint64_t>(kernels::block_bytes(t.type)),
                     &t.n_bytes)) {
      return corrupt(what + ": byte size overflows");
    }
  } else if (!opt_.allow_unsupported_types) {
    const std::string name = ggml_type_name(t.type_id);
    const std::string id = std::to_string(t.type_id);
    const std::string desc =
        name.rfind("type ", 0) == 0 ? "unknown type id " + id : "type " + name + " (id " + id + ")";
    return Status(StatusCode::unsupported, what + " has " + desc +
                                               ", which RadixChat does not support (supported: " +
                                               kernels::supported_dtypes_list() + ")");
  }
  if (t.offset % f_.alignment_ != 0) {
    return corrupt(what + ": data offset " + std::to_string(t.offset) +
                   " is not a multiple of the alignment " + std::to_string(f_.alignment_));
  }
  if (!f_.tensor_index_.emplace(t.name, f_.tensors_.size()).second) {
    return corrupt("duplicate tensor name " + quoted(t.name));
  }
  f_.tensors_.push_back(t);
  return {};
}

Status GgufParser::check_tensor_data() {
  const uint64_t data_size = f_.data_offset_ <= f_.size_ ? f_.size_ - f_.data_offset_ : 0;
  std::vector<const GgufTensorInfo*> order;
  for (GgufTensorInfo& t : f_.tensors_) {
    if (!t.supported) continue;
    uint64_t end = 0;
    if (!checked_add(t.offset, t.n_bytes, &end) || f_.data_offset_ > f_.size_ || end > data_size) {
      uint64_t abs_begin = 0, abs_end = 0;
      const bool ok = checked_add(f_.data_offset_, t.offset, &abs_begin) &&
                      checked_add(abs_begin, t.n_bytes, &abs_end);
      return corrupt(
          "tensor " + quoted(t.name) + ": data [" +
          (ok ? std::to_string(abs_begin) + ", " + std::to_string(abs_end)
              : "offset " + std::to_string(t.offset) + " + " + std::to_string(t.n_bytes)) +
          ") past end of file (size " + std::to_string(f_.size_) + ")");
    }
    t.data = f_.base_ + f_.data_offset_ + t.offset;
    if (t.n_bytes > 0) order.push_back(&t);
  }
  std::sort(order.begin(), order.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < order.size(); ++i) {
    const GgufTensorInfo& a = *order[i - 1];
    const GgufTensorInfo& b = *order[i];
    if (a.offset + a.n_bytes > b.offset) {
      return corrupt("tensors " + quoted(a.name) + " [" + std::to_string(a.offset) + ", " +
                     std::to_string(a.offset + a.n_bytes) + ") and " + quoted(b.name) + " [" +
                     std::to_string(b.offset) + ", " + std::to_string(b.offset + b.n_bytes) +
                     ") overlap in the data section");
    }
  }
  return {};
}

Status GgufParser::parse() {
  uint64_t n_tensors = 0, n_kv = 0;
  if (Status s = read_header(&n_tensors, &n_kv); !s.ok()) return s;
  if (Status s = read_metadata(n_kv); !s.ok()) return s;
  if (Status s = read_alignment(); !s.ok()) return s;
  f_.tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    if (Status s = read_tensor_info(i); !s.ok()) return s;
  }
  // The data section starts at the next multiple of the alignment.
  const uint64_t a = f_.alignment_;
  if (!checked_add(pos_, a - 1, &f_.data_offset_)) return corrupt("data offset overflows");
  f_.data_offset_ -= f_.data_offset_ % a;
  return check_tensor_data();
}

Result<std::unique_ptr<GgufFile>> GgufFile::from_memory(std::span<const uint8_t> bytes,
                                                        const GgufOpenOptions& options) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->base_ = bytes.data();
  f->size_ = bytes.size();
  GgufParser parser(*f, options);
  if (Status s = parser.parse(); !s.ok()) return s;
  return f;
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path,
                                                 const GgufOpenOptions& options) {
  auto fail = [&](StatusCode code, const std::string& msg) {
    return Status(code, path + ": " + msg);
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return fail(e == ENOENT ? StatusCode::not_found : StatusCode::invalid_argument,
                std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(StatusCode::invalid_argument, "not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return fail(StatusCode::corrupt_data, "file is empty");
  }
  void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (map == MAP_FAILED)
    return fail(StatusCode::internal, std::string("mmap: ") + std::strerror(map_errno));

  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  f->mapping_ = map;
  f->base_ = static_cast<const uint8_t*>(map);
  f->size_ = static_cast<uint64_t>(st.st_size);
  GgufParser parser(*f, options);
  if (Status s = parser.parse(); !s.ok()) return fail(s.code(), s.message());
  return f;
}

void GgufFile::release_pages(const void* p, uint64_t bytes) const {
  const auto at = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(base_);
  if (!mapping_ || at < base || at + bytes > base + size_) return;
  const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (at + page - 1) / page * page, end = (at + bytes) / page * page;
  // The mapping is read-only and private, so dropping its pages loses nothing.
  if (first < end) ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

GgufFile::~GgufFile() {
  if (mapping_) ::munmap(mapping_, size_);
}

}  // namespace rc::model
