#include "tiers/block-format.h"

#include <xxhash.h>

#include <cstring>

#include "tiers/byte-codec.h"

namespace rc::tiers {

namespace {

constexpr char kMagic[8] = {'R', 'C', 'K', 'V', 'B', 'L', 'K', '\0'};

void write_keyspace(ByteWriter& w, const Keyspace& s) {
  w.bytes({reinterpret_cast<const char*>(s.model.bytes.data()), 16});
  w.u32(uint32_t(s.kv_type));
  w.u32(uint32_t(s.n_layers));
  w.u32(uint32_t(s.n_kv_heads));
  w.u32(uint32_t(s.head_dim));
  w.u32(uint32_t(s.block_tokens));
  w.u32(uint32_t(s.rope.n_rot));
  w.f32(s.rope.freq_base);
  w.u32(s.rope.neox_halves ? 1 : 0);
  w.f32(s.rope.llama3_factor);
  w.f32(s.rope.llama3_low_freq_factor);
  w.f32(s.rope.llama3_high_freq_factor);
  w.u32(uint32_t(s.rope.llama3_original_context));
}

// Compared field by field as bytes, so a NaN in a RoPE float still compares
// equal to itself and unknown enum values cannot be cast into a DType.
bool same_keyspace(ByteReader& r, const Keyspace& s) {
  ByteWriter want;
  write_keyspace(want, s);
  std::span<const uint8_t> got = r.raw(want.data().size());
  return !r.failed() && std::memcmp(got.data(), want.data().data(), got.size()) == 0;
}

Hash128 read_hash(ByteReader& r) {
  Hash128 h;
  std::span<const uint8_t> b = r.raw(16);
  if (!r.failed()) std::memcpy(h.bytes.data(), b.data(), 16);
  return h;
}

}  // namespace

Decoded refused_block(BlockFault fault, const std::string& what) {
  Decoded d;
  d.fault = fault;
  d.status = Status(StatusCode::corrupt_data,
                    std::string("KV block refused (") + block_fault_name(fault) + "): " + what);
  return d;
}

const char* block_fault_name(BlockFault f) {
  switch (f) {
    case BlockFault::none:
      return "none";
    case BlockFault::truncated:
      return "truncated";
    case BlockFault::malformed:
      return "malformed";
    case BlockFault::checksum:
      return "checksum";
    case BlockFault::foreign:
      return "foreign";
    case BlockFault::unauthentic:
      return "unauthentic";
    case BlockFault::nonfinite:
      return "non-finite values";
  }
  return "unknown";
}

size_t block_header_bytes() {
  // magic, version, keyspace (16 + 12 x 4), parent, key, count, payload bytes
  return 8 + 4 + (16 + 12 * 4) + 16 + 16 + 4 + 8;
}

size_t encoded_block_bytes(const Keyspace& space) {
  return block_header_bytes() + 4 * size_t(space.block_tokens) +
         size_t(space.block_payload_bytes()) + 8;
}

Result<std::vector<uint8_t>> encode_block(const Keyspace& space, const Block& block) {
  if (Status s = space.validate(); !s.ok()) return s;
  if (block.tokens.size() != size_t(space.block_tokens))
    return Status(StatusCode::invalid_argument,
                  "a KV block holds " + std::to_string(space.block_tokens) + " tokens, got " +
                      std::to_string(block.tokens.size()));
  if (block.payload.size() != size_t(space.block_payload_bytes()))
    return Status(StatusCode::invalid_argument,
                  "a KV block's payload is " + std::to_string(space.block_payload_bytes()) +
                      " bytes, got " + std::to_string(block.payload.size()));
  if (chain_key(space, block.parent, block.tokens) != block.key)
    return Status(StatusCode::invalid_argument,
                  "KV block key is not the chain hash of its parent and tokens");
  ByteWriter w;
  w.data().reserve(encoded_block_bytes(space));
  w.bytes({kMagic, 8});
  w.u32(kBlockFormatVersion);
  write_keyspace(w, space);
  w.bytes({reinterpret_cast<const char*>(block.parent.bytes.data()), 16});
  w.bytes({reinterpret_cast<const char*>(block.key.bytes.data()), 16});
  w.u32(uint32_t(block.tokens.size()));
  w.u64(block.payload.size());
  for (int32_t t : block.tokens) w.u32(uint32_t(t));
  w.bytes({reinterpret_cast<const char*>(block.payload.data()), block.payload.size()});
  w.u64(XXH64(w.data().data(), w.data().size(), 0));
  const std::vector<char>& d = w.data();
  return std::vector<uint8_t>(d.begin(), d.end());
}

Decoded decode_block(const Keyspace& space, const BlockKey& expected,
                     std::span<const uint8_t> bytes) {
  if (bytes.size() < block_header_bytes() + 8)
    return refused_block(BlockFault::truncated,
                         std::to_string(bytes.size()) + " bytes is shorter than a header");
  ByteReader r(bytes);
  std::span<const uint8_t> magic = r.raw(8);
  if (std::memcmp(magic.data(), kMagic, 8) != 0)
    return refused_block(BlockFault::malformed, "not a RadixChat KV block (bad magic)");
  uint32_t version = r.u32();
  if (version != kBlockFormatVersion)
    return refused_block(BlockFault::malformed, "format version " + std::to_string(version) +
                                                    ", this build reads " +
                                                    std::to_string(kBlockFormatVersion));
  // The checksum is checked before the header is trusted: a flipped bit in
  // a count or in the keyspace is then reported as what it is.
  const uint64_t stored_sum = [&] {
    ByteReader tail(bytes.subspan(bytes.size() - 8));
    return tail.u64();
  }();
  // Sizes come next because the checksum only covers the right bytes when
  // the total length is right; a short block is reported as truncated.
  ByteReader sizes(bytes.subspan(block_header_bytes() - 12, 12));
  const uint64_t n_tokens = sizes.u32();
  const uint64_t n_payload = sizes.u64();
  const uint64_t want = block_header_bytes() + 4 * n_tokens + n_payload + 8;
  if (n_tokens > (uint64_t(1) << 24) || n_payload > (uint64_t(1) << 40))
    return refused_block(BlockFault::malformed, "impossible token or payload count");
  if (bytes.size() < want)
    return refused_block(BlockFault::truncated,
                         std::to_string(bytes.size()) + " of " + std::to_string(want) + " bytes");
  if (bytes.size() > want)
    return refused_block(BlockFault::malformed,
                         std::to_string(bytes.size() - want) + " trailing bytes");
  if (XXH64(bytes.data(), bytes.size() - 8, 0) != stored_sum)
    return refused_block(BlockFault::checksum, "checksum mismatch");

  if (!same_keyspace(r, space))
    return refused_block(BlockFault::foreign, "written for another model, KV type, shape or RoPE");
  Decoded d;
  d.block.parent = read_hash(r);
  d.block.key = read_hash(r);
  r.u32();
  r.u64();
  if (d.block.key != expected)
    return refused_block(BlockFault::foreign,
                         "holds block " + d.block.key.hex() + ", not " + expected.hex());
  if (n_tokens != uint64_t(space.block_tokens) ||
      n_payload != uint64_t(space.block_payload_bytes()))
    return refused_block(BlockFault::foreign, "sizes do not match this keyspace");
  d.block.tokens.resize(n_tokens);
  for (int32_t& t : d.block.tokens) t = int32_t(r.u32());
  std::span<const uint8_t> payload = r.raw(n_payload);
  if (r.failed()) return refused_block(BlockFault::truncated, "short payload");
  if (chain_key(space, d.block.parent, d.block.tokens) != d.block.key)
    return refused_block(BlockFault::foreign, "key is not the chain hash of its parent and tokens");
  d.block.payload.assign(payload.begin(), payload.end());
  return d;
}

}  // namespace rc::tiers
