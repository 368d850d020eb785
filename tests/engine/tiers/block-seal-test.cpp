// Sealed blocks: round trip, no token ids in the clear, every changed byte,
// another key, keyspace, block key or context refused, non-finite values
// refused after decryption, and key files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tier-fixtures.h"
#include "tiers/block-seal.h"

namespace rc::tiers {
namespace {

namespace fs = std::filesystem;
using testing::make_block;
using testing::small_space;
using testing::test_key;

// True when `bytes` holds `run` as consecutive little-endian int32s.
bool holds_run(const std::vector<uint8_t>& bytes, std::span<const int32_t> run) {
  std::vector<uint8_t> needle(run.size() * 4);
  std::memcpy(needle.data(), run.data(), needle.size());
  return std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end()) != bytes.end();
}

TEST(BlockSeal, RoundTripAndNoTokensInTheClear) {
  const Keyspace s = small_space(1, kernels::DType::f16, 16);
  Block b = make_block(s, BlockKey{}, 3);
  for (size_t i = 0; i + 1 < b.payload.size(); i += 2) b.payload[i + 1] &= 0x3B;  // finite f16s
  Result<std::vector<uint8_t>> sealed = seal_block(s, *test_key(), "disk", b);
  ASSERT_TRUE(sealed.ok()) << sealed.status().to_string();
  EXPECT_EQ(sealed.value().size(), sealed_block_bytes(s));
  // The oracle: the plaintext format holds the tokens, the sealed one none.
  const std::vector<uint8_t> plain = encode_block(s, b).value();
  for (size_t i = 0; i + 4 <= b.tokens.size(); ++i) {
    std::span<const int32_t> run(b.tokens.data() + i, 4);
    EXPECT_TRUE(holds_run(plain, run));
    EXPECT_FALSE(holds_run(sealed.value(), run)) << i;
  }
  Decoded d = open_sealed_block(s, *test_key(), "disk", b.key, sealed.value());
  ASSERT_EQ(d.fault, BlockFault::none) << d.status.to_string();
  EXPECT_EQ(d.block.tokens, b.tokens);
  EXPECT_EQ(d.block.payload, b.payload);
  // Two seals of one block differ (fresh nonces), and both open.
  EXPECT_NE(seal_block(s, *test_key(), "disk", b).value(), sealed.value());
}

TEST(BlockSeal, EveryChangedByteIsRefused) {
  const Keyspace s = small_space();
  Block b = make_block(s, BlockKey{}, 4);
  std::fill(b.payload.begin(), b.payload.end(), uint8_t(0x11));
  const std::vector<uint8_t> good = seal_block(s, *test_key(), "disk", b).value();
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x01;
    Decoded d = open_sealed_block(s, *test_key(), "disk", b.key, bad);
    EXPECT_NE(d.fault, BlockFault::none) << "byte " << i;
    EXPECT_EQ(d.status.code(), StatusCode::corrupt_data);
  }
  for (size_t n : {size_t(0), size_t(10), good.size() - 1}) {
    EXPECT_EQ(open_sealed_block(s, *test_key(), "disk", b.key, std::span(good).first(n)).fault,
              BlockFault::truncated);
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(open_sealed_block(s, *test_key(), "disk", b.key, longer).fault, BlockFault::malformed);
}

TEST(BlockSeal, AnotherKeyContextBlockOrKeyspaceFailsAuthentication) {
  const Keyspace s = small_space();
  Block b = make_block(s, BlockKey{}, 5);
  std::fill(b.payload.begin(), b.payload.end(), uint8_t(0x22));
  const std::vector<uint8_t> sealed = seal_block(s, *test_key(), "redis:team-a", b).value();
  const Block other = make_block(s, BlockKey{}, 6);
  EXPECT_EQ(open_sealed_block(s, *test_key(2), "redis:team-a", b.key, sealed).fault,
            BlockFault::unauthentic);
  EXPECT_EQ(open_sealed_block(s, *test_key(), "redis:team-b", b.key, sealed).fault,
            BlockFault::unauthentic);
  EXPECT_EQ(open_sealed_block(s, *test_key(), "redis:team-a", other.key, sealed).fault,
            BlockFault::unauthentic);
  EXPECT_EQ(open_sealed_block(small_space(2), *test_key(), "redis:team-a", b.key, sealed).fault,
            BlockFault::unauthentic);
  EXPECT_EQ(open_sealed_block(s, *test_key(), "redis:team-a", b.key, sealed).fault,
            BlockFault::none);
}

TEST(BlockSeal, NonFiniteValuesAreRefusedAfterDecryption) {
  for (kernels::DType type : {kernels::DType::f16, kernels::DType::bf16, kernels::DType::f32}) {
    const Keyspace s = small_space(1, type);
    Block b = make_block(s, BlockKey{}, 7);
    std::fill(b.payload.begin(), b.payload.end(), uint8_t(0));
    EXPECT_TRUE(payload_is_finite(type, b.payload));
    // One infinity in the last element (little-endian: its high byte last).
    const size_t elem = size_t(kernels::kv_elem_bytes(type));
    uint8_t* last = b.payload.data() + b.payload.size() - elem;
    if (type == kernels::DType::f16) {
      last[1] = 0x7C;
    } else if (type == kernels::DType::bf16) {
      last[0] = 0x80;
      last[1] = 0x7F;
    } else {
      last[2] = 0x80;
      last[3] = 0x7F;
    }
    EXPECT_FALSE(payload_is_finite(type, b.payload)) << int(type);
    const std::vector<uint8_t> sealed = seal_block(s, *test_key(), "disk", b).value();
    Decoded d = open_sealed_block(s, *test_key(), "disk", b.key, sealed);
    EXPECT_EQ(d.fault, BlockFault::nonfinite) << int(type);
  }
}

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rc-seal-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(KeyFileTest, MadeOnFirstUsePrivateAndStable) {
  const fs::path file = dir_ / "sub" / "kv-disk.key";
  Result<SealKey> first = load_or_create_key_file(file);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  struct stat st;
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(file.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  Result<SealKey> again = load_or_create_key_file(file);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().bytes, first.value().bytes);
  EXPECT_NE(SealKey::random().bytes, first.value().bytes);
}

TEST_F(KeyFileTest, BadOrOpenKeyFilesAreOneClearError) {
  fs::create_directories(dir_);
  const fs::path file = dir_ / "bad.key";
  {
    std::ofstream f(file);
    f << "not a key\n";
  }
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  Result<SealKey> bad = load_or_create_key_file(file);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(bad.status().message().find("64 hex digits"), std::string::npos);
  {
    std::ofstream f(file);
    f << SealKey::random().hex() << "\n";
  }
  fs::permissions(file, fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
  Result<SealKey> open = load_or_create_key_file(file);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("chmod 600"), std::string::npos);
  EXPECT_FALSE(SealKey::from_hex(std::string(63, 'a')).ok());
  EXPECT_FALSE(SealKey::from_hex(std::string(64, 'g')).ok());
  const SealKey k = SealKey::random();
  EXPECT_EQ(SealKey::from_hex(" " + k.hex() + "\n").value().bytes, k.bytes);
}

}  // namespace
}  // namespace rc::tiers
