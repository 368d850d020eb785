// Paged attention, KV writes and page copies of the CUDA backend against the
// reference: page sizes 1/3/16, scattered page tables, GQA groups 1/4/5/8,
// head dims 20/64/128/256, batches mixing fresh prefill, decode and chunks
// with n_past > 0, and long contexts that make the kernel split the key
// range (flash-decoding) and combine the pieces.
//
// F32, F16 and BF16 pools: kv_store must round exactly like the reference
// (bytes compared), and both read the same stored values.
//
// Tolerance: the output is a convex combination of V rows, so its error is
// measured against max |V|: |gpu - ref| <= 1e-5 * max|V|. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "gpu-test-util.h"

namespace rc::kernels {
namespace {

using test::DevBuf;
using test::expect_no_error;
using test::from_device;
using test::to_device;

struct SeqSpec {
  int n_past, n_new;
};

struct AttnCase {
  int page_size, group, head_dim;
  std::vector<SeqSpec> specs;
  std::string name;
  DType kv_type = DType::f32;
};

void PrintTo(const AttnCase& c, std::ostream* os) { *os << c.name; }

class CudaAttention : public ::testing::TestWithParam<AttnCase> {};

TEST_P(CudaAttention, MatchesReference) {
  RC_REQUIRE_CUDA(gpu);
  const AttnCase& c = GetParam();
  const int n_kv_heads = 2, n_heads = n_kv_heads * c.group, hd = c.head_dim;
  const int kv_dim = n_kv_heads * hd, q_dim = n_heads * hd;
  std::mt19937 rng(uint32_t(c.page_size * 1000 + c.group * 10 + hd));

  int total_pages = 3;
  for (const SeqSpec& s : c.specs)
    total_pages += (s.n_past + s.n_new + c.page_size - 1) / c.page_size;
  std::vector<int32_t> perm(static_cast<size_t>(total_pages));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  const KvPoolShape shape{2, n_kv_heads, hd, c.page_size, total_pages, c.kv_type};

  auto ref = make_reference_backend();
  auto ref_pool = ref->make_kv_pool(shape);
  auto gpu_pool = gpu->make_kv_pool(shape);
  ASSERT_TRUE(ref_pool && gpu_pool) << gpu->take_error();

  const int layer = 1;
  std::vector<std::vector<int32_t>> tables;
  std::vector<AttentionSeq> seqs;
  size_t next_page = 0;
  int q_rows = 0;
  float vmax = 0.0f;
  for (const SeqSpec& spec : c.specs) {
    const int n_ctx = spec.n_past + spec.n_new;
    const int pages = (n_ctx + c.page_size - 1) / c.page_size;
    tables.emplace_back(perm.begin() + long(next_page), perm.begin() + long(next_page) + pages);
    next_page += size_t(pages);
    std::vector<int32_t> slots(static_cast<size_t>(n_ctx));
    for (int p = 0; p < n_ctx; ++p) {
      slots[size_t(p)] = tables.back()[size_t(p / c.page_size)] * c.page_size + p % c.page_size;
    }
    const auto k = test::random_vec(size_t(n_ctx) * size_t(kv_dim), rng());
    const auto v = test::random_vec(size_t(n_ctx) * size_t(kv_dim), rng());
    vmax = std::max(vmax, test::max_abs(v));
    ref->kv_store(*ref_pool, layer, k.data(), v.data(), slots.data(), n_ctx);
    DevBuf dk = to_device(*gpu, k), dv = to_device(*gpu, v);
    gpu->kv_store(*gpu_pool, layer, dk.as(), dv.as(), slots.data(), n_ctx);
    seqs.push_back(AttentionSeq{nullptr, spec.n_past, spec.n_new, q_rows});
    q_rows += spec.n_new;
  }
  for (size_t j = 0; j < seqs.size(); ++j) seqs[j].page_table = tables[j].data();
  const size_t pool_bytes =
      size_t(total_pages) * size_t(c.page_size) * size_t(kv_dim) * size_t(kv_elem_bytes(c.kv_type));
  auto host_bytes = [&](const void* p) {
    const auto* b = static_cast<const uint8_t*>(p);
    return std::vector<uint8_t>(b, b + pool_bytes);
  };
  EXPECT_EQ(from_device<uint8_t>(*gpu, gpu_pool->k(layer), pool_bytes),
            host_bytes(ref_pool->k(layer)));
  EXPECT_EQ(from_device<uint8_t>(*gpu, gpu_pool->v(layer), pool_bytes),
            host_bytes(ref_pool->v(layer)));

  const auto q = test::random_vec(size_t(q_rows) * size_t(q_dim), rng());
  const float scale = 1.0f / std::sqrt(float(hd));
  std::vector<float> want(q.size());
  ref->attention(*ref_pool, layer, q.data(), want.data(), seqs, n_heads, scale);
  DevBuf dq = to_device(*gpu, q);
  DevBuf dout = to_device(*gpu, std::vector<float>(q.size(), NAN));
  gpu->attention(*gpu_pool, layer, dq.as(), dout.as(), seqs, n_heads, scale);
  const auto got = from_device(*gpu, dout.get(), q.size());
  expect_no_error(*gpu, "attention");
  const std::vector<float> tol(q.size(), vmax);
  test::expect_close(got.data(), want.data(), tol.data(), q.size(), 1e-5, "attention " + c.name);

  // Each sequence alone (planned and split differently) gives the same rows.
  for (size_t j = 0; j < seqs.size(); ++j) {
    const AttentionSeq alone = seqs[j];
    gpu->attention(*gpu_pool, layer, dq.as(), dout.as(), std::span(&alone, 1), n_heads, scale);
    const auto solo = from_device(*gpu, dout.get(), q.size());
    const size_t off = size_t(alone.q_row) * size_t(q_dim), len = size_t(alone.n_new) * q_dim;
    test::expect_close(solo.data() + off, want.data() + off, tol.data(), len, 1e-5,
                       "attention " + c.name + " sequence " + std::to_string(j) + " alone");
  }
  expect_no_error(*gpu, "attention alone");
}

std::vector<AttnCase> attn_cases() {
  const std::vector<SeqSpec> mixed{{0, 5}, {37, 1}, {20, 19}, {0, 1}, {100, 40}, {63, 2}};
  const std::vector<SeqSpec> decode_long{{3000, 1}};  // one tile: split in pieces
  const std::vector<SeqSpec> decode_batch{{700, 1}, {1500, 1}, {5, 1}, {2047, 1}};
  const std::vector<SeqSpec> prefill_chunk{{300, 200}};  // chunk over a cached prefix
  std::vector<AttnCase> cases;
  for (int ps : {1, 3, 16}) {
    for (int group : {1, 4, 5, 8}) {
      for (int hd : {64, 20, 128}) {
        cases.push_back({ps, group, hd, mixed, ""});
      }
    }
    for (int group : {1, 8}) {
      cases.push_back({ps, group, 64, decode_long, "decode_long"});
      cases.push_back({ps, group, 128, decode_batch, "decode_batch"});
      cases.push_back({ps, group, 64, prefill_chunk, "prefill_chunk"});
    }
  }
  cases.push_back({16, 4, 256, mixed, "hd256"});          // > 48 KiB of shared memory
  cases.push_back({1, 32, 64, decode_batch, "group32"});  // heads of one group over two blocks
  for (DType t : {DType::f16, DType::bf16}) {
    cases.push_back({16, 4, 64, mixed, "", t});
    cases.push_back({3, 5, 20, mixed, "", t});
    cases.push_back({16, 8, 128, decode_long, "decode_long", t});
    cases.push_back({1, 4, 64, prefill_chunk, "prefill_chunk", t});
  }
  for (AttnCase& c : cases) {
    c.name = "page" + std::to_string(c.page_size) + "_gqa" + std::to_string(c.group) + "_hd" +
             std::to_string(c.head_dim) + (c.name.empty() ? "" : "_" + c.name) +
             (c.kv_type == DType::f32 ? "" : std::string("_") + dtype_name(c.kv_type));
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaAttention, ::testing::ValuesIn(attn_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(CudaKvPool, CopyPagesMatchesReferenceIncludingChains) {
  RC_REQUIRE_CUDA(gpu);
  auto ref = make_reference_backend();
  const KvPoolShape shape{3, 2, 8, 4, 10};
  auto a = ref->make_kv_pool(shape);
  auto b = gpu->make_kv_pool(shape);
  ASSERT_TRUE(a && b);
  const size_t floats = size_t(10 * 4 * 16);
  for (int l = 0; l < 3; ++l) {
    const auto k = test::random_vec(floats, uint32_t(l));
    const auto v = test::random_vec(floats, uint32_t(l + 10));
    std::memcpy(a->k(l), k.data(), floats * 4);
    std::memcpy(a->v(l), v.data(), floats * 4);
    gpu->upload(b->k(l), k.data(), floats * 4);
    gpu->upload(b->v(l), v.data(), floats * 4);
  }
  // Independent pairs (one launch), then a chain: page 7 is written by the
  // first pair and read by the second, so order matters.
  const int32_t src1[] = {0, 5, 9}, dst1[] = {7, 1, 2};
  const int32_t src2[] = {3, 7, 4}, dst2[] = {7, 8, 4};
  for (auto [src, dst] : {std::pair{src1, dst1}, std::pair{src2, dst2}}) {
    ref->copy_pages(*a, src, dst, 3);
    gpu->copy_pages(*b, src, dst, 3);
    for (int l = 0; l < 3; ++l) {
      const auto* ak = static_cast<const float*>(a->k(l));
      const auto* av = static_cast<const float*>(a->v(l));
      EXPECT_EQ(from_device(*gpu, b->k(l), floats), std::vector<float>(ak, ak + floats));
      EXPECT_EQ(from_device(*gpu, b->v(l), floats), std::vector<float>(av, av + floats));
    }
  }
  expect_no_error(*gpu, "copy_pages");
}

TEST(CudaKvPool, RefusesHeadDimsTheKernelsDoNotSupport) {
  RC_REQUIRE_CUDA(gpu);
  EXPECT_EQ(gpu->make_kv_pool({1, 1, 18, 1, 4}), nullptr);  // not a multiple of 4
  EXPECT_NE(gpu->take_error().find("head_dim"), std::string::npos);
  EXPECT_EQ(gpu->make_kv_pool({1, 1, 512, 1, 4}), nullptr);  // over 256
  EXPECT_NE(gpu->take_error().find("head_dim"), std::string::npos);
  EXPECT_EQ(gpu->make_kv_pool({0, 1, 64, 1, 4}), nullptr);
  EXPECT_NE(gpu->make_kv_pool({2, 1, 64, 16, 3}), nullptr);
}

}  // namespace
}  // namespace rc::kernels
