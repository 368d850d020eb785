#include "tiers/block-seal.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "radixchat/private-files.h"
#include "tiers/byte-codec.h"

namespace rc::tiers {

namespace fs = std::filesystem;

namespace {

constexpr char kSealMagic[8] = {'R', 'C', 'K', 'V', 'S', 'E', 'A', 'L'};
constexpr uint32_t kSealVersion = 1;
constexpr size_t kNonceBytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
constexpr size_t kTagBytes = crypto_aead_xchacha20poly1305_ietf_ABYTES;
constexpr size_t kPrefixBytes = 8 + 4 + kNonceBytes;

static_assert(crypto_aead_xchacha20poly1305_ietf_KEYBYTES == 32);

void init_sodium() {
  static std::once_flag once;
  // sodium_init() fails only without a source of randomness; RC_ASSERT-grade.
  std::call_once(once, [] {
    if (sodium_init() < 0) std::abort();
  });
}

std::vector<uint8_t> associated_data(const Keyspace& space, std::string_view context,
                                     const BlockKey& key) {
  ByteWriter w;
  w.bytes({kSealMagic, 8});
  w.u32(kSealVersion);
  const Hash128 id = space.id();
  w.bytes({reinterpret_cast<const char*>(id.bytes.data()), 16});
  w.bytes({reinterpret_cast<const char*>(key.bytes.data()), 16});
  w.u32(uint32_t(context.size()));
  w.bytes(context);
  const std::vector<char>& d = w.data();
  return {d.begin(), d.end()};
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> read_small_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return Status(StatusCode::not_found, "no key file " + path.string());
    return Status(errno == EACCES ? StatusCode::permission_denied : StatusCode::internal,
                  "cannot open key file " + path.string() + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(StatusCode::invalid_argument, "key file " + path.string() + " is not a file");
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    return Status(StatusCode::invalid_argument,
                  "key file " + path.string() +
                      " can be read by other accounts; make it private with: chmod 600 " +
                      path.string());
  }
  std::string text(256, '\0');
  ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  if (n < 0)
    return Status(StatusCode::internal,
                  "cannot read key file " + path.string() + ": " + std::strerror(errno));
  text.resize(size_t(n));
  return text;
}

}  // namespace

SealKey SealKey::random() {
  init_sodium();
  SealKey k;
  crypto_aead_xchacha20poly1305_ietf_keygen(k.bytes.data());
  return k;
}

Result<SealKey> SealKey::from_hex(std::string_view hex) {
  while (!hex.empty() && (hex.back() == '\n' || hex.back() == '\r' || hex.back() == ' '))
    hex.remove_suffix(1);
  while (!hex.empty() && hex.front() == ' ') hex.remove_prefix(1);
  SealKey k;
  if (hex.size() != 64)
    return Status(StatusCode::invalid_argument, "a sealing key is 64 hex digits, got " +
                                                    std::to_string(hex.size()) + " characters");
  for (size_t i = 0; i < 32; ++i) {
    const int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return Status(StatusCode::invalid_argument, "a sealing key is 64 hex digits");
    k.bytes[i] = uint8_t(hi * 16 + lo);
  }
  return k;
}

std::string SealKey::hex() const {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

Result<fs::path> default_key_file(const std::string& name) {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "radixchat" / name;
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/')
    return fs::path(home) / ".local" / "share" / "radixchat" / name;
  return Status(
      StatusCode::not_found,
      "no folder for the sealing key: neither XDG_DATA_HOME nor HOME is an absolute path");
}

Result<SealKey> load_or_create_key_file(const fs::path& path) {
  Result<std::string> text = read_small_file(path);
  if (text.ok()) {
    Result<SealKey> k = SealKey::from_hex(text.value());
    if (!k.ok())
      return Status(StatusCode::invalid_argument,
                    "key file " + path.string() + " holds no key: " + k.status().message());
    return k;
  }
  if (text.status().code() != StatusCode::not_found) return text.status();
  if (path.has_parent_path())
    if (Status s = make_private_dir(path.parent_path()); !s.ok()) return s;
  const SealKey fresh = SealKey::random();
  // Written under a temporary name and linked into place, so a reader never
  // sees a half-written key and a second process starting now keeps ours.
  const fs::path tmp = path.string() + "." + std::to_string(::getpid()) + ".tmp";
  if (Status s = write_private_file(tmp, fresh.hex() + "\n"); !s.ok()) return s;
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (linked != 0 && link_errno != EEXIST)
    return Status(link_errno == EACCES ? StatusCode::permission_denied : StatusCode::internal,
                  "cannot create key file " + path.string() + ": " + std::strerror(link_errno));
  if (linked == 0) return fresh;
  return load_or_create_key_file(path);  // another process made it first
}

size_t sealed_block_bytes(const Keyspace& space) {
  return kPrefixBytes + encoded_block_bytes(space) + kTagBytes;
}

Result<std::vector<uint8_t>> seal_block(const Keyspace& space, const SealKey& key,
                                        std::string_view context, const Block& block) {
  Result<std::vector<uint8_t>> plain = encode_block(space, block);
  if (!plain.ok()) return plain.status();
  init_sodium();
  const std::vector<uint8_t> ad = associated_data(space, context, block.key);
  std::vector<uint8_t> out(kPrefixBytes + plain.value().size() + kTagBytes);
  std::memcpy(out.data(), kSealMagic, 8);
  for (int i = 0; i < 4; ++i) out[8 + size_t(i)] = uint8_t(kSealVersion >> (8 * i));
  uint8_t* nonce = out.data() + 12;
  randombytes_buf(nonce, kNonceBytes);
  unsigned long long written = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(out.data() + kPrefixBytes, &written,
                                             plain.value().data(), plain.value().size(), ad.data(),
                                             ad.size(), nullptr, nonce, key.bytes.data());
  out.resize(kPrefixBytes + size_t(written));
  sodium_memzero(plain.value().data(), plain.value().size());
  return out;
}

Decoded open_sealed_block(const Keyspace& space, const SealKey& key, std::string_view context,
                          const BlockKey& expected, std::span<const uint8_t> bytes) {
  if (bytes.size() < kPrefixBytes + kTagBytes)
    return refused_block(BlockFault::truncated,
                         std::to_string(bytes.size()) + " bytes is shorter than a sealed block");
  if (std::memcmp(bytes.data(), kSealMagic, 8) != 0)
    return refused_block(BlockFault::malformed, "not a sealed RadixChat KV block (bad magic)");
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= uint32_t(bytes[8 + size_t(i)]) << (8 * i);
  if (version != kSealVersion)
    return refused_block(BlockFault::malformed, "sealing version " + std::to_string(version) +
                                                    ", this build reads " +
                                                    std::to_string(kSealVersion));
  if (bytes.size() != sealed_block_bytes(space))
    return refused_block(
        bytes.size() < sealed_block_bytes(space) ? BlockFault::truncated : BlockFault::malformed,
        std::to_string(bytes.size()) + " of " + std::to_string(sealed_block_bytes(space)) +
            " bytes");
  init_sodium();
  const std::vector<uint8_t> ad = associated_data(space, context, expected);
  std::vector<uint8_t> plain(bytes.size() - kPrefixBytes - kTagBytes);
  unsigned long long got = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          plain.data(), &got, nullptr, bytes.data() + kPrefixBytes, bytes.size() - kPrefixBytes,
          ad.data(), ad.size(), bytes.data() + 12, key.bytes.data()) != 0)
    return refused_block(
        BlockFault::unauthentic,
        "authentication failed: written under another key, key, keyspace or tenant, "
        "or changed since");
  plain.resize(size_t(got));
  Decoded d = decode_block(space, expected, plain);
  sodium_memzero(plain.data(), plain.size());
  if (d.fault != BlockFault::none) return d;
  if (!payload_is_finite(space.kv_type, d.block.payload))
    return refused_block(BlockFault::nonfinite, "a K or V value is not finite");
  return d;
}

bool payload_is_finite(kernels::DType type, std::span<const uint8_t> payload) {
  // Exponent all ones is infinity or NaN in every float format.
  switch (type) {
    case kernels::DType::f32: {
      for (size_t i = 0; i + 4 <= payload.size(); i += 4) {
        uint32_t v;
        std::memcpy(&v, payload.data() + i, 4);
        if ((v & 0x7F800000u) == 0x7F800000u) return false;
      }
      return true;
    }
    case kernels::DType::f16:
    case kernels::DType::bf16: {
      const uint16_t mask = type == kernels::DType::f16 ? 0x7C00 : 0x7F80;
      uint16_t any_bad = 0;
      for (size_t i = 0; i + 2 <= payload.size(); i += 2) {
        uint16_t v;
        std::memcpy(&v, payload.data() + i, 2);
        any_bad |= uint16_t((v & mask) == mask);
      }
      return any_bad == 0;
    }
    default:
      return false;
  }
}

}  // namespace rc::tiers
