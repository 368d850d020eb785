// Corrupt and truncated GGUF files: each gives one clear Status, never a
// crash or a huge allocation.
#include <gtest/gtest.h>

#include "gguf-bytes.h"
#include "model/gguf-reader.h"
#include "model/gguf-writer.h"

namespace rc::model {
namespace {

using rc::testing::GgufBytes;

Status open_status(std::span<const uint8_t> bytes) {
  auto f = GgufFile::from_memory(bytes);
  return f.ok() ? Status() : f.status();
}

// Expects failure with `code` and a message containing `needle`.
void expect_error(const GgufBytes& g, StatusCode code, const std::string& needle) {
  const Status s = open_status(g.span());
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << needle;
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << "one line: " << s.message();
}

std::vector<uint8_t> small_model_bytes(uint64_t* data_end) {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set("tokenizer.ggml.tokens", GgufOwnedValue::strings({"<unk>", "<s>", "</s>", "a"}));
  w.set("tokenizer.ggml.scores", GgufOwnedValue::f32s({0, 0, 0, -1}));
  w.set("nested", GgufOwnedValue::array(model::GgufType::array,
                                        {GgufOwnedValue::i32s({1, 2}), GgufOwnedValue::i32s({})}));
  w.set_u32("llama.block_count", 1);
  w.add_tensor("a.weight", kernels::DType::f32, {4, 2}, std::vector<uint8_t>(32, 1));
  w.add_tensor("blk.3.attn_q.weight", kernels::DType::q8_0, {32, 2}, std::vector<uint8_t>(68, 2));
  std::vector<uint8_t> bytes = w.serialize();
  auto f = GgufFile::from_memory({bytes.data(), bytes.size()});
  EXPECT_TRUE(f.ok());
  const GgufTensorInfo* last = (*f)->find_tensor("blk.3.attn_q.weight");
  *data_end = (*f)->data_offset() + last->offset + last->n_bytes;
  return bytes;
}

TEST(GgufErrors, TruncatedAtEveryByte) {
  uint64_t data_end = 0;
  const std::vector<uint8_t> full = small_model_bytes(&data_end);
  ASSERT_LE(data_end, full.size());
  for (size_t len = 0; len < full.size(); ++len) {
    // A copy of exactly `len` bytes, so reading past it is caught by ASan builds.
    std::vector<uint8_t> prefix(full.begin(), full.begin() + len);
    const Status s = open_status({prefix.data(), prefix.size()});
    if (len >= data_end) {
      EXPECT_TRUE(s.ok()) << "len " << len << ": " << s.to_string();  // only padding missing
      continue;
    }
    ASSERT_FALSE(s.ok()) << "prefix of " << len << " bytes was accepted";
    EXPECT_EQ(s.code(), StatusCode::corrupt_data) << len << ": " << s.to_string();
    EXPECT_FALSE(s.message().empty());
  }
}

TEST(GgufErrors, TruncationMessagesNameThePlace) {
  uint64_t data_end = 0;
  const std::vector<uint8_t> full = small_model_bytes(&data_end);
  std::vector<uint8_t> cut(full.begin(), full.begin() + data_end - 1);
  const Status s = open_status({cut.data(), cut.size()});
  EXPECT_EQ(s.message(), "tensor 'blk.3.attn_q.weight': data [" + std::to_string(data_end - 68) +
                             ", " + std::to_string(data_end) + ") past end of file (size " +
                             std::to_string(data_end - 1) + ")");
  std::vector<uint8_t> tiny(full.begin(), full.begin() + 30);
  EXPECT_EQ(open_status({tiny.data(), tiny.size()}).message(),
            "header claims 2 tensors and 5 metadata keys, impossible in a file of 30 bytes");
  // Every cut inside the header names the field it was reading.
  for (size_t len = 160; len < data_end - 200; len += 7) {
    std::vector<uint8_t> p(full.begin(), full.begin() + len);
    const std::string m = open_status({p.data(), p.size()}).message();
    const bool named = m.find("truncated: ") == 0 || m.find("runs past end of file") != m.npos ||
                       m.find("cannot fit") != m.npos || m.find("past end of file") != m.npos;
    EXPECT_TRUE(named) << len << ": " << m;
    EXPECT_TRUE(m.find("metadata") != m.npos || m.find("tensor") != m.npos) << len << ": " << m;
  }
}

TEST(GgufErrors, BadMagicAndVersions) {
  GgufBytes g;
  g.u32(0x464c457f).u32(3).u64(0).u64(0);  // an ELF file
  expect_error(g, StatusCode::corrupt_data, "not a GGUF file (magic bytes 7f 45 4c 46");
  expect_error(GgufBytes().u32(0x46554747), StatusCode::corrupt_data, "truncated: version");
  GgufBytes small;
  small.b = {'G', 'G'};
  expect_error(small, StatusCode::corrupt_data, "too small");
  expect_error(GgufBytes().header(0, 0, 1), StatusCode::unsupported, "version 1 is not supported");
  expect_error(GgufBytes().header(0, 0, 4), StatusCode::corrupt_data, "unknown GGUF version 4");
  expect_error(GgufBytes().header(0, 0, 0x03000000), StatusCode::unsupported, "big-endian");
  EXPECT_TRUE(open_status(GgufBytes().header(0, 0, 2).span()).ok());
  EXPECT_TRUE(open_status(GgufBytes().header(0, 0, 3).span()).ok());
}

TEST(GgufErrors, HugeCountsAndLengths) {
  expect_error(GgufBytes().header(1ull << 62, 0), StatusCode::corrupt_data,
               "header claims 4611686018427387904 tensors");
  expect_error(GgufBytes().header(0, ~0ull), StatusCode::corrupt_data, "impossible");
  GgufBytes many_keys;
  many_keys.header(0, 70000).zeros(70000 * 13);
  expect_error(many_keys, StatusCode::corrupt_data, "(limits: 1048576 and 65536)");
  // Key length far past the end.
  expect_error(GgufBytes().header(0, 1).u64(1ull << 63).zeros(16), StatusCode::corrupt_data,
               "metadata key #0: string length 9223372036854775808 at offset 24 runs past end");
  // String value length.
  GgufBytes s;
  s.header(0, 1).str("k").u32(8).u64(~0ull - 3).zeros(8);
  expect_error(s, StatusCode::corrupt_data, "metadata 'k': string length");
  // Array counts: scalars, strings and nested arrays.
  GgufBytes a;
  a.header(0, 1).str("arr").u32(9).u32(4).u64(1ull << 61).zeros(64);
  expect_error(a, StatusCode::corrupt_data,
               "metadata 'arr': array of 2305843009213693952 u32 values cannot fit");
  GgufBytes as;
  as.header(0, 1).str("arr").u32(9).u32(8).u64(1000).zeros(64);
  expect_error(as, StatusCode::corrupt_data, "string values cannot fit");
  GgufBytes aa;
  aa.header(0, 1).str("arr").u32(9).u32(9).u64(1ull << 40).zeros(64);
  expect_error(aa, StatusCode::corrupt_data, "array values cannot fit");
  // Deep nesting is bounded (no stack exhaustion).
  GgufBytes deep;
  deep.header(0, 1).str("deep").u32(9);
  for (int i = 0; i < 100; ++i) deep.u32(9).u64(1);
  deep.u32(4).u64(0);
  expect_error(deep, StatusCode::corrupt_data, "nested deeper than 8");
  // Many nested arrays: memory stays bounded.
  GgufBytes many;
  many.header(0, 1).str("many").u32(9).u32(9).u64(100000);
  for (int i = 0; i < 100000; ++i) many.u32(4).u64(0);
  expect_error(many, StatusCode::corrupt_data, "more than 65536 nested arrays");
  // Tensor dims.
  GgufBytes dims;
  dims.header(1, 0).tensor("t", {1ull << 40, 1ull << 40}, 0, 0);
  expect_error(dims, StatusCode::corrupt_data, "tensor 't': shape overflows");
  GgufBytes nd;
  nd.header(1, 0).str("t").u32(5).zeros(64);
  expect_error(nd, StatusCode::corrupt_data, "tensor 't': n_dims 5 is outside 1..4");
  GgufBytes neg;
  neg.header(1, 0).tensor("t", {~0ull}, 0, 0).zeros(8);
  expect_error(neg, StatusCode::corrupt_data, "shape overflows");
}

TEST(GgufErrors, BadValues) {
  expect_error(GgufBytes().header(0, 1).str("k").u32(13).u32(0), StatusCode::corrupt_data,
               "metadata 'k': unknown value type 13");
  expect_error(GgufBytes().header(0, 1).str("k").u32(9).u32(77).u64(0), StatusCode::corrupt_data,
               "unknown array element type 77");
  GgufBytes b;
  b.header(0, 1).str("flag").u32(7).put<uint8_t>(2);
  expect_error(b, StatusCode::corrupt_data, "metadata 'flag': bool value 2 is not 0 or 1");
  GgufBytes ba;
  ba.header(0, 1).str("flags").u32(9).u32(7).u64(3).put<uint8_t>(1).put<uint8_t>(0).put<uint8_t>(9);
  expect_error(ba, StatusCode::corrupt_data, "metadata 'flags'[2]: bool value 9");
  expect_error(GgufBytes().header(0, 2).kv_u32("k", 1).kv_u32("k", 2), StatusCode::corrupt_data,
               "duplicate metadata key 'k'");
  expect_error(GgufBytes().header(0, 1).kv_u32("general.alignment", 48), StatusCode::corrupt_data,
               "general.alignment 48 is not a power of two");
  expect_error(GgufBytes().header(0, 1).kv_u32("general.alignment", 0), StatusCode::corrupt_data,
               "not a power of two");
  expect_error(GgufBytes().header(0, 1).kv_str("general.alignment", "32"), StatusCode::corrupt_data,
               "'general.alignment' is string, expected u32");
  // Non-printable bytes in names are escaped in messages.
  expect_error(GgufBytes().header(0, 2).kv_u32("a\nb", 1).kv_u32("a\nb", 2),
               StatusCode::corrupt_data, "'a\\x0ab'");
}

TEST(GgufErrors, TensorProblems) {
  auto file = [](auto add_tensors, size_t data_bytes, int n_tensors) {
    GgufBytes g;
    g.header(n_tensors, 0);
    add_tensors(g);
    g.pad_to(32).zeros(data_bytes);
    return g;
  };
  // Past the end of the file.
  expect_error(file(
                   [](GgufBytes& g) {
                     g.tensor("blk.3.attn_q.weight", {4, 4}, 0, 0);
                   },
                   32, 1),
               StatusCode::corrupt_data, "tensor 'blk.3.attn_q.weight': data [");
  expect_error(file([](GgufBytes& g) { g.tensor("w", {4}, 0, 1ull << 62); }, 32, 1),
               StatusCode::corrupt_data, "past end of file");
  expect_error(file([](GgufBytes& g) { g.tensor("w", {4}, 0, ~0ull - 31); }, 32, 1),
               StatusCode::corrupt_data, "past end of file");
  // Misaligned.
  expect_error(file([](GgufBytes& g) { g.tensor("w", {4}, 0, 8); }, 64, 1),
               StatusCode::corrupt_data,
               "tensor 'w': data offset 8 is not a multiple of the alignment 32");
  // Unsupported and unknown types list what is supported.
  expect_error(file([](GgufBytes& g) { g.tensor("blk.0.ffn_down.weight", {256}, 11, 0); }, 256, 1),
               StatusCode::unsupported,
               "tensor 'blk.0.ffn_down.weight' has type Q3_K (id 11), which RadixChat does not "
               "support (supported: F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K)");
  expect_error(file([](GgufBytes& g) { g.tensor("w", {4}, 999, 0); }, 32, 1),
               StatusCode::unsupported, "tensor 'w' has unknown type id 999, which");
  // Row length not a whole number of blocks.
  expect_error(file(
                   [](GgufBytes& g) {
                     g.tensor("w", {100, 2}, 12, 0);
                   },
                   1024, 1),
               StatusCode::corrupt_data,
               "row length ne[0]=100 is not a multiple of Q4_K's block of 256");
  // Overlapping data.
  expect_error(file(
                   [](GgufBytes& g) {
                     g.tensor("a", {16}, 0, 0);
                     g.tensor("b", {16}, 0, 32);
                   },
                   128, 2),
               StatusCode::corrupt_data, "tensors 'a' [0, 64) and 'b' [32, 96) overlap");
  // Duplicate names.
  expect_error(file(
                   [](GgufBytes& g) {
                     g.tensor("a", {4}, 0, 0);
                     g.tensor("a", {4}, 0, 32);
                   },
                   64, 2),
               StatusCode::corrupt_data, "duplicate tensor name 'a'");
  // Zero-element tensors are fine anywhere inside the file.
  EXPECT_TRUE(open_status(file(
                              [](GgufBytes& g) {
                                g.tensor("z", {0, 4}, 0, 0);
                              },
                              0, 1)
                              .span())
                  .ok());
}

}  // namespace
}  // namespace rc::model
