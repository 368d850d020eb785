// Paged attention and the KV writes of the fast CPU backend against the
// reference: page sizes 1/3/16, scattered page tables, GQA ratios 1 and 4,
// batches mixing fresh prefill, decode and chunks with n_past > 0.
//
// Tolerance: the output is a convex combination of V rows, so its error is
// measured against max |V|: |fast - ref| <= 1e-5 * max|V| (fp32 dots and an
// online softmax against a double textbook softmax).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "cpu/cpu-backend.h"
#include "cpu/cpu-backends.h"
#include "kernel-test-util.h"

namespace rc::kernels {
namespace {

struct SeqSpec {
  int n_past, n_new;
};

struct AttnCase {
  int page_size, group, head_dim;
  SimdLevel level;
};

class Attention : public ::testing::TestWithParam<AttnCase> {};

TEST_P(Attention, MatchesReference) {
  const AttnCase c = GetParam();
  const int n_kv_heads = 2, n_heads = n_kv_heads * c.group, hd = c.head_dim;
  const int kv_dim = n_kv_heads * hd, q_dim = n_heads * hd;
  const std::vector<SeqSpec> specs{{0, 5}, {37, 1}, {20, 19}, {0, 1}, {100, 40}, {63, 2}};
  std::mt19937 rng(uint32_t(c.page_size * 100 + c.group * 10 + hd));

  // Page tables drawn from a shuffled pool, so no sequence is contiguous.
  int total_pages = 3;  // spare pages nobody owns
  for (const SeqSpec& s : specs)
    total_pages += (s.n_past + s.n_new + c.page_size - 1) / c.page_size;
  std::vector<int32_t> perm(static_cast<size_t>(total_pages));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  const KvPoolShape shape{2, n_kv_heads, hd, c.page_size, total_pages};

  auto ref = make_reference_backend();
  auto fast = make_cpu_backend_at(3, c.level);
  auto ref_pool = ref->make_kv_pool(shape);
  auto fast_pool = fast->make_kv_pool(shape);
  ASSERT_TRUE(ref_pool && fast_pool);

  const int layer = 1;
  std::vector<std::vector<int32_t>> tables;
  std::vector<AttentionSeq> seqs;
  size_t next_page = 0;
  int q_rows = 0;
  float vmax = 0.0f;
  for (size_t j = 0; j < specs.size(); ++j) {
    const int n_ctx = specs[j].n_past + specs[j].n_new;
    const int pages = (n_ctx + c.page_size - 1) / c.page_size;
    tables.emplace_back(perm.begin() + long(next_page), perm.begin() + long(next_page) + pages);
    next_page += size_t(pages);
    std::vector<int32_t> slots(static_cast<size_t>(n_ctx));
    for (int p = 0; p < n_ctx; ++p) {
      slots[size_t(p)] = tables.back()[size_t(p / c.page_size)] * c.page_size + p % c.page_size;
    }
    const auto k = test::random_vec(size_t(n_ctx * kv_dim), rng());
    const auto v = test::random_vec(size_t(n_ctx * kv_dim), rng());
    vmax = std::max(vmax, test::max_abs(v));
    ref->kv_store(*ref_pool, layer, k.data(), v.data(), slots.data(), n_ctx);
    fast->kv_store(*fast_pool, layer, k.data(), v.data(), slots.data(), n_ctx);
    seqs.push_back(AttentionSeq{nullptr, specs[j].n_past, specs[j].n_new, q_rows});
    q_rows += specs[j].n_new;
  }
  for (size_t j = 0; j < seqs.size(); ++j) seqs[j].page_table = tables[j].data();
  const size_t pool_floats = size_t(total_pages) * size_t(c.page_size) * size_t(kv_dim);
  ASSERT_EQ(0, std::memcmp(ref_pool->k(layer), fast_pool->k(layer), pool_floats * 4));
  ASSERT_EQ(0, std::memcmp(ref_pool->v(layer), fast_pool->v(layer), pool_floats * 4));

  const auto q = test::random_vec(size_t(q_rows * q_dim), rng());
  const float scale = 1.0f / std::sqrt(float(hd));
  std::vector<float> got(q.size(), NAN), want(q.size());
  ref->attention(*ref_pool, layer, q.data(), want.data(), seqs, n_heads, scale);
  fast->attention(*fast_pool, layer, q.data(), got.data(), seqs, n_heads, scale);
  const std::vector<float> tol(q.size(), vmax);
  test::expect_close(got.data(), want.data(), tol.data(), q.size(), 1e-5, "attention");

  // Each sequence alone gives the same rows as inside the batch.
  for (size_t j = 0; j < seqs.size(); ++j) {
    AttentionSeq alone = seqs[j];
    std::vector<float> solo(q.size(), 0.0f);
    fast->attention(*fast_pool, layer, q.data(), solo.data(), std::span(&alone, 1), n_heads, scale);
    const size_t off = size_t(seqs[j].q_row) * size_t(q_dim);
    EXPECT_EQ(0, std::memcmp(solo.data() + off, got.data() + off,
                             size_t(seqs[j].n_new) * size_t(q_dim) * 4))
        << "sequence " << j;
  }
}

std::vector<AttnCase> attn_cases() {
  std::vector<AttnCase> cases;
  for (SimdLevel l : test::runnable_levels()) {
    for (int ps : {1, 3, 16}) {
      for (int group : {1, 4}) {
        for (int hd : {64, 20}) cases.push_back({ps, group, hd, l});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Attention, ::testing::ValuesIn(attn_cases()),
                         [](const auto& info) {
                           const AttnCase& c = info.param;
                           return "page" + std::to_string(c.page_size) + "_gqa" +
                                  std::to_string(c.group) + "_hd" + std::to_string(c.head_dim) +
                                  "_" + simd_level_name(c.level);
                         });

TEST(KvPool, CopyPagesMatchesReference) {
  const KvPoolShape shape{3, 2, 8, 4, 10};
  auto ref = make_reference_backend();
  auto fast = make_cpu_backend(2);
  auto a = ref->make_kv_pool(shape);
  auto b = fast->make_kv_pool(shape);
  const size_t floats = size_t(10 * 4 * 16);
  for (int l = 0; l < 3; ++l) {
    const auto k = test::random_vec(floats, uint32_t(l));
    const auto v = test::random_vec(floats, uint32_t(l + 10));
    std::memcpy(a->k(l), k.data(), floats * 4);
    std::memcpy(b->k(l), k.data(), floats * 4);
    std::memcpy(a->v(l), v.data(), floats * 4);
    std::memcpy(b->v(l), v.data(), floats * 4);
  }
  const int32_t src[] = {0, 5, 9}, dst[] = {7, 1, 2};
  ref->copy_pages(*a, src, dst, 3);
  fast->copy_pages(*b, src, dst, 3);
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(0, std::memcmp(a->k(l), b->k(l), floats * 4));
    EXPECT_EQ(0, std::memcmp(a->v(l), b->v(l), floats * 4));
    // Page 7 of layer l is now page 0's contents.
    EXPECT_EQ(0, std::memcmp(b->k(l) + 7 * 64, b->k(l), 64 * 4));
  }
}

TEST(KvPool, ZeroFilledAlignedAndRejectsBadShapes) {
  auto fast = make_cpu_backend(1);
  auto pool = fast->make_kv_pool({2, 1, 4, 16, 3});
  ASSERT_TRUE(pool);
  for (int l = 0; l < 2; ++l) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pool->k(l)) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pool->v(l)) % 64, 0u);
    for (int i = 0; i < 3 * 16 * 4; ++i) ASSERT_EQ(pool->k(l)[i], 0.0f);
  }
  EXPECT_EQ(fast->make_kv_pool({0, 1, 4, 16, 3}), nullptr);
  EXPECT_EQ(fast->make_kv_pool({1, 1, 4, 0, 3}), nullptr);
}

}  // namespace
}  // namespace rc::kernels
