// Sealed KV blocks: what the disk and Redis tiers store is an encoded block
// (block-format.h) encrypted and authenticated with XChaCha20-Poly1305
// (libsodium), so a block file or a Redis value shows no token ids, and a
// block that anyone without the key wrote or changed is refused
// (docs/architecture.md section 8).
//
// Layout: magic "RCKVSEAL" (8) | version u32 (1) | nonce (24) |
// ciphertext of the encoded block | Poly1305 tag (16). The associated data
// binds the ciphertext to where it may be read: the magic and version, the
// keyspace id, the block key and a context string (the disk tier's "disk",
// Redis's "redis:<tenant>"). A block copied under another key, another
// keyspace or another tenant therefore fails authentication even under the
// same key. After decryption the block passes decode_block()'s checks and
// then a value check: a payload holding a non-finite K or V element is
// refused, so a key holder's bug cannot poison attention either.
//
// Keys: 32 random bytes, kept as 64 hex digits in a 0600 file that
// load_or_create_key_file() makes on first use. The disk tier's key is per
// installation (default_key_file("kv-disk.key")); a Redis tenant's key comes
// from a file or RADIXCHAT_REDIS_KEY, never from the command line.
//
// Pure functions and values; any thread.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/status.h"
#include "tiers/block-format.h"

namespace rc::tiers {

struct SealKey {
  std::array<uint8_t, 32> bytes{};
  // A fresh random key.
  static SealKey random();
  // invalid_argument unless `hex` is 64 hex digits (surrounding spaces and
  // a trailing newline are ignored).
  static Result<SealKey> from_hex(std::string_view hex);
  std::string hex() const;
};

// $XDG_DATA_HOME/radixchat/<name>, else $HOME/.local/share/radixchat/<name>;
// not_found when neither is an absolute path.
Result<std::filesystem::path> default_key_file(const std::string& name);

// Reads the key in `path`; when the file does not exist, makes a random key
// and writes it there 0600 (parents 0700), exclusively, so two processes
// starting together agree on one key. invalid_argument for a file that is
// not a key, or that other accounts may read (it says to chmod 600).
Result<SealKey> load_or_create_key_file(const std::filesystem::path& path);

// Bytes a sealed block of `space` takes.
size_t sealed_block_bytes(const Keyspace& space);

// encode_block()'s checks, then sealing under a fresh random nonce.
Result<std::vector<uint8_t>> seal_block(const Keyspace& space, const SealKey& key,
                                        std::string_view context, const Block& block);

// Refuses (Decoded::fault) a sealed block that is short or not sealed
// (truncated, malformed), fails authentication (unauthentic), fails
// decode_block() (its fault), or holds a non-finite value (nonfinite).
Decoded open_sealed_block(const Keyspace& space, const SealKey& key, std::string_view context,
                          const BlockKey& expected, std::span<const uint8_t> bytes);

// True when every element of a payload of KV type `type` is finite.
bool payload_is_finite(kernels::DType type, std::span<const uint8_t> payload);

}  // namespace rc::tiers
