// Paged attention and the KV writes of the fast CPU backend against the
// reference: page sizes 1/3/16, scattered page tables, GQA ratios 1 and 4,
// head dims 64 and 20 (a SIMD tail), F32/F16/BF16 pools, 1 and 3 threads,
// batches mixing fresh prefill, decode and chunks with n_past > 0, query
// blocks and key tiles cut anywhere (tails of 1 to 63 keys, 1 to 15 queries).
//
// Tolerance: the output is a convex combination of V rows, so its error is
// measured against max |V|. Against the reference over the same pool (both
// read the same stored 16-bit values): 1e-5 * max|V| (fp32 dots and an
// online softmax against a double textbook softmax). Against the reference
// over an F32 pool, which adds the storage rounding of K and V: docs/architecture.md
// section 11's 1e-2 for F16/BF16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "cpu/cpu-attention.h"
#include "cpu/cpu-backend.h"
#include "cpu/cpu-backends.h"
#include "cpu/fp16.h"
#include "cpu/matvec.h"
#include "kernel-test-util.h"

namespace rc::kernels {
namespace {

struct SeqSpec {
  int n_past, n_new;
};

struct AttnCase {
  int page_size, group, head_dim;
  SimdLevel level;
  DType kv_type;
  int threads;
  bool avx512 = false;  // the 512-bit task where the CPU and head dim allow
};

// Sets the 512-bit task on or off for one test and back on after it.
struct Avx512Attention {
  explicit Avx512Attention(bool on) { set_attention_avx512_enabled(on); }
  ~Avx512Attention() { set_attention_avx512_enabled(true); }
};

class Attention : public ::testing::TestWithParam<AttnCase> {};

TEST_P(Attention, MatchesReference) {
  const AttnCase c = GetParam();
  const Avx512Attention task(c.avx512);
  const int n_kv_heads = 2, n_heads = n_kv_heads * c.group, hd = c.head_dim;
  const int kv_dim = n_kv_heads * hd, q_dim = n_heads * hd;
  // 600 + 1, 520 + 3 and 250 + 30 cross 256-key segments (kSegmentKeys);
  // alone in the three-thread cases (below) the first two, one query chunk
  // each, are split by segments.
  const std::vector<SeqSpec> specs{{0, 5},  {37, 1},   {20, 19}, {0, 1},   {100, 40}, {63, 2},
                                   {0, 67}, {130, 33}, {600, 1}, {520, 3}, {250, 30}};
  std::mt19937 rng(uint32_t(c.page_size * 100 + c.group * 10 + hd));

  // Page tables drawn from a shuffled pool, so no sequence is contiguous.
  int total_pages = 3;  // spare pages nobody owns
  for (const SeqSpec& s : specs)
    total_pages += (s.n_past + s.n_new + c.page_size - 1) / c.page_size;
  std::vector<int32_t> perm(static_cast<size_t>(total_pages));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  const KvPoolShape shape{2, n_kv_heads, hd, c.page_size, total_pages, c.kv_type};
  KvPoolShape f32_shape = shape;
  f32_shape.type = DType::f32;

  auto ref = make_reference_backend();
  auto fast = make_cpu_backend_at(c.threads, c.level);
  auto ref_pool = ref->make_kv_pool(shape);
  auto fast_pool = fast->make_kv_pool(shape);
  auto f32_pool = ref->make_kv_pool(f32_shape);
  ASSERT_TRUE(ref_pool && fast_pool && f32_pool);

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
    ref->kv_store(*f32_pool, layer, k.data(), v.data(), slots.data(), n_ctx);
    seqs.push_back(AttentionSeq{nullptr, specs[j].n_past, specs[j].n_new, q_rows});
    q_rows += specs[j].n_new;
  }
  for (size_t j = 0; j < seqs.size(); ++j) seqs[j].page_table = tables[j].data();
  const size_t pool_bytes =
      size_t(total_pages) * size_t(c.page_size) * size_t(kv_dim) * size_t(kv_elem_bytes(c.kv_type));
  ASSERT_EQ(0, std::memcmp(ref_pool->k(layer), fast_pool->k(layer), pool_bytes));
  ASSERT_EQ(0, std::memcmp(ref_pool->v(layer), fast_pool->v(layer), pool_bytes));

  const auto q = test::random_vec(size_t(q_rows * q_dim), rng());
  const float scale = 1.0f / std::sqrt(float(hd));
  std::vector<float> got(q.size(), NAN), want(q.size());
  ref->attention(*ref_pool, layer, q.data(), want.data(), seqs, n_heads, scale);
  fast->attention(*fast_pool, layer, q.data(), got.data(), seqs, n_heads, scale);
  const std::vector<float> tol(q.size(), vmax);
  test::expect_close(got.data(), want.data(), tol.data(), q.size(), 1e-5, "attention");
  if (c.kv_type != DType::f32) {
    std::vector<float> exact(q.size());
    ref->attention(*f32_pool, layer, q.data(), exact.data(), seqs, n_heads, scale);
    test::expect_close(got.data(), exact.data(), tol.data(), q.size(), 1e-2,
                       "attention vs an F32 pool");
  }

  // Each sequence alone gives the same rows as inside the batch (with three
  // threads, a one-chunk sequence past 256 keys has two tasks for three
  // threads and is split by segments).
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
    for (bool avx512 : {false, true}) {
      if (avx512 && (l != SimdLevel::avx2 || !cpu_has_avx512_matvec())) continue;
      for (int ps : {1, 3, 16}) {
        for (int group : {1, 4}) {
          // 20: a SIMD tail (the 512-bit task needs a multiple of 16: not
          // taken); 80: one and a quarter 64-dim blocks of the 512-bit task.
          for (int hd : {64, 20, 80}) {
            for (DType t : {DType::f32, DType::f16, DType::bf16}) {
              cases.push_back({ps, group, hd, l, t, ps == 3 ? 1 : 3, avx512});
            }
          }
        }
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
                                  "_" + simd_level_name(c.level) + (c.avx512 ? "_512" : "") + "_" +
                                  dtype_name(c.kv_type) + "_t" + std::to_string(c.threads);
                         });

// A query's output is the same bits however its sequence is cut into
// steps: one prefill, chunks after a cached prefix, or one token at a time
// (decode). Sampled replies with and without a cache hit rely on it. For
// every task the backend can take, with keys past a 64-key tile and past
// 256-key segments: decode past 256 keys is split by segments (two kv
// heads, three threads), the prefill and the chunks are not.
TEST(Attention, QueryBitsDoNotDependOnTheStep) {
  const int n_kv_heads = 2, group = 4, hd = 64, n = 600;
  const int n_heads = n_kv_heads * group, kv_dim = n_kv_heads * hd, q_dim = n_heads * hd;
  std::vector<std::pair<SimdLevel, bool>> tasks;
  for (SimdLevel l : test::runnable_levels()) {
    tasks.push_back({l, false});
    if (l == SimdLevel::avx2 && cpu_has_avx512_matvec()) tasks.push_back({l, true});
  }
  const auto k = test::random_vec(size_t(n * kv_dim), 1);
  const auto v = test::random_vec(size_t(n * kv_dim), 2);
  const auto q = test::random_vec(size_t(n * q_dim), 3);
  std::vector<int32_t> table(static_cast<size_t>(n)), slots(static_cast<size_t>(n));
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937(4));
  for (int p = 0; p < n; ++p) slots[size_t(p)] = table[size_t(p)];
  for (auto [level, avx512] : tasks) {
    const Avx512Attention task(avx512);
    auto be = make_cpu_backend_at(3, level);
    auto pool = be->make_kv_pool({1, n_kv_heads, hd, 1, n, DType::f16});
    be->kv_store(*pool, 0, k.data(), v.data(), slots.data(), n);
    const float scale = 0.125f;
    // Steps [from, to): the rows of queries from .. to - 1.
    auto run = [&](const std::vector<int>& cuts) {
      std::vector<float> out(size_t(n * q_dim), NAN);
      for (size_t c = 0; c + 1 < cuts.size(); ++c) {
        const AttentionSeq seq{table.data(), cuts[c], cuts[c + 1] - cuts[c], 0};
        be->attention(*pool, 0, q.data() + int64_t(cuts[c]) * q_dim,
                      out.data() + int64_t(cuts[c]) * q_dim, std::span(&seq, 1), n_heads, scale);
      }
      return out;
    };
    std::vector<int> one_by_one(size_t(n + 1));
    std::iota(one_by_one.begin(), one_by_one.end(), 0);
    const std::vector<float> whole = run({0, n});
    const std::string name = std::string(simd_level_name(level)) + (avx512 ? " 512" : "");
    EXPECT_EQ(0, std::memcmp(whole.data(), run({0, 17, 64, 65, 130, n}).data(), whole.size() * 4))
        << name << ": chunks";
    EXPECT_EQ(0, std::memcmp(whole.data(), run(one_by_one).data(), whole.size() * 4))
        << name << ": token by token";
  }
}

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
    const float* bk = static_cast<const float*>(b->k(l));
    EXPECT_EQ(0, std::memcmp(bk + 7 * 64, bk, 64 * 4));
  }
}

TEST(KvPool, ZeroFilledAlignedAndRejectsBadShapes) {
  auto fast = make_cpu_backend(1);
  auto pool = fast->make_kv_pool({2, 1, 4, 16, 3});
  ASSERT_TRUE(pool);
  for (int l = 0; l < 2; ++l) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pool->k(l)) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pool->v(l)) % 64, 0u);
    for (int i = 0; i < 3 * 16 * 4; ++i) ASSERT_EQ(static_cast<const float*>(pool->k(l))[i], 0.0f);
  }
  EXPECT_EQ(fast->make_kv_pool({0, 1, 4, 16, 3}), nullptr);
  EXPECT_EQ(fast->make_kv_pool({1, 1, 4, 0, 3}), nullptr);
  EXPECT_EQ(fast->make_kv_pool({1, 1, 4, 16, 3, DType::q8_0}), nullptr);
}

// A 16-bit pool takes half the bytes, rounds to nearest even on store, and
// copies pages bit for bit.
TEST(KvPool, SixteenBitPoolsRoundAndCopy) {
  for (DType t : {DType::f16, DType::bf16}) {
    const KvPoolShape shape{2, 2, 8, 4, 6, t};
    EXPECT_EQ(kv_bytes_per_token(shape), 2 * 2 * 2 * 8 * 2);
    auto ref = make_reference_backend();
    auto fast = make_cpu_backend(2);
    auto a = ref->make_kv_pool(shape);
    auto b = fast->make_kv_pool(shape);
    ASSERT_TRUE(a && b);
    const int n = 24, kv_dim = 16;
    const auto k = test::random_vec(size_t(n * kv_dim), 3);
    const auto v = test::random_vec(size_t(n * kv_dim), 4);
    std::vector<int32_t> slots(static_cast<size_t>(n));
    std::iota(slots.begin(), slots.end(), 0);
    for (int l = 0; l < 2; ++l) {
      ref->kv_store(*a, l, k.data(), v.data(), slots.data(), n);
      fast->kv_store(*b, l, k.data(), v.data(), slots.data(), n);
    }
    const auto* stored = static_cast<const uint16_t*>(b->k(1));
    for (int i = 0; i < n * kv_dim; ++i) {
      const uint16_t want =
          t == DType::f16 ? f32_to_fp16_portable(k[size_t(i)]) : f32_to_bf16(k[size_t(i)]);
      ASSERT_EQ(stored[i], want) << dtype_name(t) << " element " << i;
    }
    const int32_t src[] = {0, 4}, dst[] = {5, 2};
    ref->copy_pages(*a, src, dst, 2);
    fast->copy_pages(*b, src, dst, 2);
    const size_t bytes = size_t(6 * 4 * kv_dim * 2);
    for (int l = 0; l < 2; ++l) {
      EXPECT_EQ(0, std::memcmp(a->k(l), b->k(l), bytes));
      EXPECT_EQ(0, std::memcmp(a->v(l), b->v(l), bytes));
    }
    EXPECT_EQ(0, std::memcmp(static_cast<const char*>(b->v(0)) + 5 * 4 * kv_dim * 2, b->v(0),
                             size_t(4 * kv_dim * 2)));
  }
}

}  // namespace
}  // namespace rc::kernels
