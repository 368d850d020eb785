// GGUF writer -> reader round trips: every metadata type, every tensor type.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "model/gguf-reader.h"
#include "model/gguf-writer.h"

namespace rc::model {
namespace {

using kernels::DType;
using V = GgufOwnedValue;

std::unique_ptr<GgufFile> parse(const std::vector<uint8_t>& bytes, GgufOpenOptions opt = {}) {
  auto f = GgufFile::from_memory({bytes.data(), bytes.size()}, opt);
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  return f.ok() ? std::move(f).value() : nullptr;
}

GgufWriter all_types_writer() {
  GgufWriter w;
  w.set("u8", V::u8(200));
  w.set("i8", V::i8(-100));
  w.set("u16", V::u16(60000));
  w.set("i16", V::i16(-30000));
  w.set("u32", V::u32(4000000000u));
  w.set("i32", V::i32(-2000000000));
  w.set("u64", V::u64(18000000000000000000ull));
  w.set("i64", V::i64(-9000000000000000000ll));
  w.set("f32", V::f32(3.25f));
  w.set("f64", V::f64(-1e300));
  w.set("bool_t", V::boolean(true));
  w.set("bool_f", V::boolean(false));
  w.set("str", V::string("héllo wörld"));
  w.set("empty_str", V::string(""));
  w.set("arr_u8", V::array(GgufType::u8, {V::u8(1), V::u8(2), V::u8(255)}));
  w.set("arr_i8", V::array(GgufType::i8, {V::i8(-1), V::i8(7)}));
  w.set("arr_u16", V::array(GgufType::u16, {V::u16(65535)}));
  w.set("arr_i16", V::array(GgufType::i16, {V::i16(-5), V::i16(5)}));
  w.set("arr_u32", V::array(GgufType::u32, {V::u32(1), V::u32(4000000000u)}));
  w.set("arr_i32", V::i32s({-3, 0, 3}));
  w.set("arr_u64", V::array(GgufType::u64, {V::u64(1ull << 40)}));
  w.set("arr_i64", V::array(GgufType::i64, {V::i64(-(1ll << 40))}));
  w.set("arr_f32", V::f32s({0.5f, -1.5f}));
  w.set("arr_f64", V::array(GgufType::f64, {V::f64(0.25), V::f64(2e200)}));
  w.set("arr_bool", V::array(GgufType::boolean, {V::boolean(true), V::boolean(false)}));
  w.set("arr_str", V::strings({"a", "", "ü"}));
  w.set("arr_empty", V::array(GgufType::u32, {}));
  w.set("nested", V::array(GgufType::array, {V::array(GgufType::u32, {V::u32(1), V::u32(2)}),
                                             V::strings({"x", "y", "z"}),
                                             V::array(GgufType::array, {V::f32s({9.0f})})}));
  return w;
}

TEST(GgufRoundTrip, EveryMetadataType) {
  GgufWriter w = all_types_writer();
  const std::vector<uint8_t> bytes = w.serialize();
  auto f = parse(bytes);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->metadata().size(), 28u);
  EXPECT_EQ(f->metadata()[0].first, "u8");  // file order kept

  EXPECT_EQ(std::get<uint8_t>(*f->find("u8")), 200);
  EXPECT_EQ(std::get<int8_t>(*f->find("i8")), -100);
  EXPECT_EQ(std::get<uint16_t>(*f->find("u16")), 60000);
  EXPECT_EQ(std::get<int16_t>(*f->find("i16")), -30000);
  EXPECT_EQ(std::get<uint32_t>(*f->find("u32")), 4000000000u);
  EXPECT_EQ(std::get<int32_t>(*f->find("i32")), -2000000000);
  EXPECT_EQ(std::get<uint64_t>(*f->find("u64")), 18000000000000000000ull);
  EXPECT_EQ(std::get<int64_t>(*f->find("i64")), -9000000000000000000ll);
  EXPECT_EQ(std::get<float>(*f->find("f32")), 3.25f);
  EXPECT_EQ(std::get<double>(*f->find("f64")), -1e300);
  EXPECT_TRUE(std::get<bool>(*f->find("bool_t")));
  EXPECT_FALSE(std::get<bool>(*f->find("bool_f")));
  EXPECT_EQ(*f->get_string("str"), "héllo wörld");
  EXPECT_EQ(*f->get_string("empty_str"), "");

  const GgufArray* a = f->find_array("arr_u8");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->elem_type, GgufType::u8);
  EXPECT_EQ(a->count, 3u);
  EXPECT_EQ(a->get<uint8_t>(2), 255);
  EXPECT_EQ(f->find_array("arr_i8")->get<int8_t>(0), -1);
  EXPECT_EQ(f->find_array("arr_u16")->get<uint16_t>(0), 65535);
  EXPECT_EQ(f->find_array("arr_i16")->get<int16_t>(1), 5);
  EXPECT_EQ(f->find_array("arr_u32")->get<uint32_t>(1), 4000000000u);
  EXPECT_EQ(f->find_array("arr_u64")->get<uint64_t>(0), 1ull << 40);
  EXPECT_EQ(f->find_array("arr_i64")->get<int64_t>(0), -(1ll << 40));
  EXPECT_EQ(f->find_array("arr_f64")->get<double>(1), 2e200);
  EXPECT_EQ(f->find_array("arr_bool")->get<bool>(0), true);
  EXPECT_EQ(f->find_array("arr_empty")->count, 0u);
  EXPECT_EQ(*f->get_i32_array("arr_i32"), (std::vector<int32_t>{-3, 0, 3}));
  EXPECT_EQ(*f->get_f32_array("arr_f32"), (std::vector<float>{0.5f, -1.5f}));
  EXPECT_EQ(*f->get_f32_array("arr_f64"), (std::vector<float>{0.25f, static_cast<float>(2e200)}));
  EXPECT_EQ(*f->get_string_array("arr_str"), (std::vector<std::string_view>{"a", "", "ü"}));

  const GgufArray* n = f->find_array("nested");
  ASSERT_TRUE(n);
  ASSERT_EQ(n->elem_type, GgufType::array);
  ASSERT_EQ(n->arrays.size(), 3u);
  EXPECT_EQ(n->arrays[0].get<uint32_t>(1), 2u);
  EXPECT_EQ(n->arrays[1].strings[2], "z");
  ASSERT_EQ(n->arrays[2].arrays.size(), 1u);
  EXPECT_EQ(n->arrays[2].arrays[0].get<float>(0), 9.0f);
  EXPECT_NE(gguf_value_summary(*f->find("nested")).find("\"z\""), std::string::npos);
}

TEST(GgufRoundTrip, TypedAccessorsConvertAndReport) {
  const std::vector<uint8_t> bytes = all_types_writer().serialize();
  auto f = parse(bytes);
  ASSERT_TRUE(f);
  // Integer getters accept any integer width whose value fits.
  EXPECT_EQ(*f->get_u32("u8"), 200u);
  EXPECT_EQ(*f->get_u32("u16"), 60000u);
  EXPECT_EQ(*f->get_i64("i8"), -100);
  EXPECT_EQ(*f->get_i64("u32"), 4000000000ll);
  EXPECT_EQ(*f->get_f32("f64"), static_cast<float>(-1e300));
  EXPECT_EQ(*f->get_bool("bool_t"), true);
  EXPECT_EQ(*f->get_u32_or("absent", 7), 7u);
  EXPECT_EQ(*f->get_f32_or("absent", 1.5f), 1.5f);
  EXPECT_EQ(*f->get_string_or("absent", "x"), "x");

  auto neg = f->get_u32("i8");
  EXPECT_EQ(neg.status().code(), StatusCode::corrupt_data);
  EXPECT_NE(neg.status().message().find("out of range"), std::string::npos);
  auto big = f->get_i64("u64");
  EXPECT_FALSE(big.ok());
  auto wrong = f->get_string("u32");
  EXPECT_EQ(wrong.status().code(), StatusCode::corrupt_data);
  EXPECT_EQ(wrong.status().message(), "metadata 'u32' is u32, expected string");
  auto missing = f->get_u32("nope");
  EXPECT_EQ(missing.status().code(), StatusCode::not_found);
  EXPECT_EQ(missing.status().message(), "missing metadata key 'nope'");
  EXPECT_FALSE(f->get_u32_or("str", 1).ok());  // present with the wrong type is still an error
  EXPECT_FALSE(f->get_string_array("arr_u8").ok());
  EXPECT_FALSE(f->get_f32_array("arr_str").ok());
}

struct TypeCase {
  DType type;
  std::vector<int64_t> ne;
};

TEST(GgufRoundTrip, EveryTensorTypeThroughAFile) {
  const TypeCase cases[] = {
      {DType::f32, {7}},        {DType::f32, {3, 5}},          {DType::f16, {8, 3}},
      {DType::bf16, {6, 2, 2}}, {DType::q8_0, {64, 3}},        {DType::q4_0, {32, 5}},
      {DType::q4_k, {256, 2}},  {DType::q6_k, {512, 1, 1, 2}}, {DType::q5_0, {64, 3}},
      {DType::q5_1, {32}},      {DType::q5_k, {256, 2}}};
  for (uint32_t alignment : {32u, 64u, 8u}) {
    GgufWriter w;
    w.set_string("general.architecture", "none");
    if (alignment != 32) w.set_alignment(alignment);
    std::mt19937 rng(alignment);
    std::vector<std::vector<uint8_t>> datas;
    int i = 0;
    for (const TypeCase& c : cases) {
      int64_t n = 1;
      for (int64_t d : c.ne) n *= d;
      std::vector<uint8_t> data(n / kernels::block_elems(c.type) * kernels::block_bytes(c.type));
      for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
      datas.push_back(data);
      w.add_tensor("t" + std::to_string(i++), c.type, c.ne, data);
    }
    const std::string path =
        ::testing::TempDir() + "/roundtrip-" + std::to_string(alignment) + ".gguf";
    ASSERT_TRUE(w.write_file(path).ok());
    EXPECT_EQ(std::filesystem::file_size(path), w.serialize().size());
    auto opened = GgufFile::open(path);
    ASSERT_TRUE(opened.ok()) << opened.status().to_string();
    const GgufFile& f = **opened;
    EXPECT_EQ(f.alignment(), alignment);
    EXPECT_EQ(f.data_offset() % alignment, 0u);
    ASSERT_EQ(f.tensors().size(), std::size(cases));
    for (size_t k = 0; k < std::size(cases); ++k) {
      const GgufTensorInfo* t = f.find_tensor("t" + std::to_string(k));
      ASSERT_TRUE(t);
      EXPECT_TRUE(t->supported);
      EXPECT_EQ(t->type, cases[k].type);
      EXPECT_EQ(t->n_dims, static_cast<int>(cases[k].ne.size()));
      for (size_t d = 0; d < 4; ++d) {
        EXPECT_EQ(t->ne[d], d < cases[k].ne.size() ? cases[k].ne[d] : 1);
      }
      EXPECT_EQ(t->offset % alignment, 0u);
      ASSERT_EQ(t->n_bytes, datas[k].size());
      EXPECT_EQ(std::memcmp(t->data, datas[k].data(), t->n_bytes), 0) << "tensor " << k;
    }
    std::remove(path.c_str());
  }
}

// release_pages drops a mapped file's pages and they read back the same
// (from the file); on a from_memory buffer, which is not a file mapping
// and would lose its bytes, it does nothing.
TEST(GgufRoundTrip, ReleasedPagesReadBackTheSame) {
  std::vector<uint8_t> data(256 * 1024);
  std::mt19937 rng(7);
  for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
  GgufWriter w;
  w.set_string("general.architecture", "none");
  w.add_tensor("big", DType::f32, {int64_t(data.size() / 4)}, data);
  const std::string path = ::testing::TempDir() + "/release-pages.gguf";
  ASSERT_TRUE(w.write_file(path).ok());
  auto opened = GgufFile::open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  const GgufTensorInfo* t = (*opened)->find_tensor("big");
  ASSERT_TRUE(t);
  (*opened)->release_pages(t->data, t->n_bytes);
  EXPECT_EQ(std::memcmp(t->data, data.data(), data.size()), 0);
  std::remove(path.c_str());

  const std::vector<uint8_t> bytes = w.serialize();
  auto in_memory = parse(bytes);
  ASSERT_TRUE(in_memory);
  const GgufTensorInfo* m = in_memory->find_tensor("big");
  ASSERT_TRUE(m);
  in_memory->release_pages(m->data, m->n_bytes);
  EXPECT_EQ(std::memcmp(m->data, data.data(), data.size()), 0);
}

TEST(GgufRoundTrip, Version2AndVocabularyOnlyFiles) {
  GgufWriter w;
  w.set_version(2);
  w.set("tokenizer.ggml.tokens", V::strings({"<unk>", "<s>"}));
  auto f = parse(w.serialize());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->version(), 2u);
  EXPECT_TRUE(f->tensors().empty());
  // No tensors: nothing after the header is needed, not even padding.
  GgufWriter w2;
  w2.set("k", V::u8(1));
  std::vector<uint8_t> bytes = w2.serialize();
  bytes.resize(4 + 4 + 8 + 8 + (8 + 1) + 4 + 1);
  EXPECT_TRUE(GgufFile::from_memory({bytes.data(), bytes.size()}).ok());
}

TEST(GgufRoundTrip, UnsupportedTypesCanBeListed) {
  GgufWriter w;
  w.add_raw_tensor("q3k", 11, {256, 2}, std::vector<uint8_t>(110 * 2, 0));
  w.add_tensor("ok", DType::f32, {4}, std::vector<uint8_t>(16, 0));
  const std::vector<uint8_t> bytes = w.serialize();
  auto strict = GgufFile::from_memory({bytes.data(), bytes.size()});
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::unsupported);
  GgufOpenOptions opt;
  opt.allow_unsupported_types = true;
  auto f = parse(bytes, opt);
  ASSERT_TRUE(f);
  const GgufTensorInfo* t = f->find_tensor("q3k");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->supported);
  EXPECT_EQ(t->type_id, 11u);
  EXPECT_EQ(t->data, nullptr);
  EXPECT_EQ(ggml_type_name(11), "Q3_K");
  EXPECT_TRUE(f->find_tensor("ok")->supported);
}

TEST(GgufRoundTrip, OpenReportsMissingFiles) {
  auto f = GgufFile::open("/nonexistent/model.gguf");
  EXPECT_EQ(f.status().code(), StatusCode::not_found);
  EXPECT_NE(f.status().message().find("/nonexistent/model.gguf"), std::string::npos);
  auto d = GgufFile::open(::testing::TempDir());
  EXPECT_FALSE(d.ok());
  const std::string empty = ::testing::TempDir() + "/empty.gguf";
  std::fclose(std::fopen(empty.c_str(), "wb"));
  auto e = GgufFile::open(empty);
  EXPECT_EQ(e.status().code(), StatusCode::corrupt_data);
  EXPECT_NE(e.status().message().find("empty"), std::string::npos);
  std::remove(empty.c_str());
}

}  // namespace
}  // namespace rc::model
