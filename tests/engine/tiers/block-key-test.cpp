// Block keys and the model fingerprint: what must separate two keys does.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <set>

#include "model/gguf-reader.h"
#include "model/gguf-writer.h"
#include "tier-fixtures.h"
#include "tiers/block-key.h"
#include "tiers/model-fingerprint.h"

namespace rc::tiers {
namespace {

using testing::small_space;

const std::vector<int32_t> kTokens = {1, 2, 3, 4};

TEST(BlockKey, EveryKeyspaceFieldSeparatesKeys) {
  std::vector<Keyspace> spaces;
  Keyspace base = small_space();
  spaces.push_back(base);
  spaces.push_back(small_space(2));                        // another model
  spaces.push_back(small_space(1, kernels::DType::bf16));  // another KV type
  spaces.push_back(small_space(1, kernels::DType::f32));
  spaces.push_back(small_space(1, kernels::DType::f16, 8));  // page size
  auto with = [&](auto change) {
    Keyspace s = base;
    change(s);
    spaces.push_back(s);
  };
  with([](Keyspace& s) { s.n_layers = 3; });
  with([](Keyspace& s) { s.n_kv_heads = 4; });
  with([](Keyspace& s) { s.head_dim = 16; });
  with([](Keyspace& s) { s.rope.n_rot = 4; });
  with([](Keyspace& s) { s.rope.freq_base = 500000.0f; });
  with([](Keyspace& s) { s.rope.neox_halves = true; });
  with([](Keyspace& s) { s.rope.llama3_factor = 8.0f; });
  with([](Keyspace& s) { s.rope.llama3_low_freq_factor = 2.0f; });
  with([](Keyspace& s) { s.rope.llama3_high_freq_factor = 2.0f; });
  with([](Keyspace& s) { s.rope.llama3_original_context = 4096; });
  std::set<std::string> keys;
  for (const Keyspace& s : spaces) keys.insert(chain_key(s, BlockKey{}, kTokens).hex());
  EXPECT_EQ(keys.size(), spaces.size());
}

TEST(BlockKey, ChainDependsOnParentAndEveryToken) {
  Keyspace s = small_space();
  BlockKey root;
  BlockKey a = chain_key(s, root, kTokens);
  EXPECT_EQ(a, chain_key(s, root, kTokens));
  EXPECT_NE(a, chain_key(s, a, kTokens));
  for (size_t i = 0; i < kTokens.size(); ++i) {
    std::vector<int32_t> t = kTokens;
    t[i] += 1;
    EXPECT_NE(a, chain_key(s, root, t)) << "token " << i;
  }
  std::vector<int32_t> seq = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<BlockKey> keys = chain_keys(s, seq);
  ASSERT_EQ(keys.size(), 2u);  // the partial last page has no key
  EXPECT_EQ(keys[0], chain_key(s, root, std::span(seq).first(4)));
  EXPECT_EQ(keys[1], chain_key(s, keys[0], std::span(seq).subspan(4, 4)));
}

TEST(BlockKey, HexRoundTripAndErrors) {
  BlockKey k = chain_key(small_space(), BlockKey{}, kTokens);
  Result<BlockKey> back = BlockKey::from_hex(k.hex());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value(), k);
  EXPECT_FALSE(BlockKey::from_hex("abc").ok());
  EXPECT_FALSE(BlockKey::from_hex(std::string(32, 'g')).ok());
  EXPECT_FALSE(BlockKey::from_hex(std::string(32, 'A')).ok());
}

model::GgufWriter tiny_model(uint8_t weight_byte, std::string_view name) {
  model::GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", std::string(name));
  w.set_u32("llama.block_count", 1);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_tensor("token_embd.weight", kernels::DType::f32, {4, 8},
               std::vector<uint8_t>(4 * 8 * 4, weight_byte));
  w.add_tensor("output_norm.weight", kernels::DType::f32, {4}, std::vector<uint8_t>(16, 0x3f));
  return w;
}

Hash128 fingerprint_of(const std::vector<uint8_t>& bytes) {
  auto f = model::GgufFile::from_memory(bytes);
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  return model_fingerprint(*f.value());
}

TEST(ModelFingerprint, FollowsTensorBytesAndHyperParametersNotNames) {
  std::vector<uint8_t> a = tiny_model(7, "model A").serialize();
  const Hash128 fa = fingerprint_of(a);
  EXPECT_EQ(fa, fingerprint_of(a));
  // A renamed copy (general.name) computes the same K/V: same fingerprint.
  EXPECT_EQ(fa, fingerprint_of(tiny_model(7, "another name").serialize()));
  // Different weights: a different model.
  EXPECT_NE(fa, fingerprint_of(tiny_model(8, "model A").serialize()));
  // One byte deep inside one tensor is enough.
  std::vector<uint8_t> flipped = a;
  auto f = model::GgufFile::from_memory(a);
  ASSERT_TRUE(f.ok());
  const model::GgufTensorInfo* t = f.value()->find_tensor("token_embd.weight");
  size_t at = size_t(f.value()->data_offset() + t->offset + t->n_bytes / 2);
  flipped[at] ^= 1;
  EXPECT_NE(fa, fingerprint_of(flipped));
  // A hyper-parameter that changes the computation changes it too.
  model::GgufWriter eps = tiny_model(7, "model A");
  eps.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-6f);
  EXPECT_NE(fa, fingerprint_of(eps.serialize()));
}

TEST(ModelFingerprint, DoesNotDependOnTheFileName) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("rc-fp-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  model::GgufWriter w = tiny_model(9, "m");
  ASSERT_TRUE(w.write_file((dir / "one.gguf").string()).ok());
  ASSERT_TRUE(w.write_file((dir / "two-renamed.gguf").string()).ok());
  auto one = model::GgufFile::open((dir / "one.gguf").string());
  auto two = model::GgufFile::open((dir / "two-renamed.gguf").string());
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(model_fingerprint(*one.value()), model_fingerprint(*two.value()));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rc::tiers
