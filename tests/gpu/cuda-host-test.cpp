// Host-side pieces of the CUDA backend, tested where no GPU is (CI): the
// weight segment decoders (compiled for the host too) against
// dequantize_row bit for bit, and the attention work plan: which blocks
// cover which queries and keys, how long contexts are split, the page
// tables in the blob, and, executed on the host with the kernels' math
// (online softmax per piece, then the combine), the reference's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>

#include "cpu/cpu-backends.h"
#include "cuda/attention.cuh"
#include "cuda/dequant.cuh"
#include "kernels/kernel-test-util.h"

namespace rc::kernels {
namespace {

template <DType T>
void check_segments(int64_t K) {
  const test::OwnedWeight ow = test::make_weight(T, 5, K, 11);
  const int64_t rb = row_bytes(T, K);
  // Row bases as the device sees them: a 256-byte aligned allocation.
  std::vector<uint8_t> storage(ow.bytes.size() + 256);
  void* aligned = storage.data();
  size_t space = storage.size();
  ASSERT_NE(std::align(256, ow.bytes.size(), aligned, space), nullptr);
  uint8_t* base = static_cast<uint8_t*>(aligned);
  std::copy(ow.bytes.begin(), ow.bytes.end(), base);
  ASSERT_TRUE(cuda::seg_aligned(T, base));
  std::vector<float> want(static_cast<size_t>(K)), got(static_cast<size_t>(K), NAN);
  for (int64_t r = 0; r < 5; ++r) {
    dequantize_row(T, ow.bytes.data() + r * rb, want.data(), K);
    std::vector<int> hits(static_cast<size_t>(K), 0);
    for (int s = 0; s < int(K / 8); ++s) {
      cuda::Seg8 g;
      cuda::decode_seg<T>(base + r * rb, s, g);
      for (int k = 0; k < 4; ++k) {
        got[size_t(g.e0 + k)] = g.w[k];
        got[size_t(g.e1 + k)] = g.w[4 + k];
        ++hits[size_t(g.e0 + k)];
        ++hits[size_t(g.e1 + k)];
      }
    }
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), size_t(K) * 4))
        << dtype_name(T) << " row " << r;
    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }))
        << dtype_name(T) << ": every element decoded exactly once";
  }
}

TEST(CudaHost, SegmentDecodersAreDequantizeRow) {
  check_segments<DType::f32>(64);
  check_segments<DType::f16>(520);
  check_segments<DType::bf16>(520);
  check_segments<DType::q8_0>(544);
  check_segments<DType::q4_0>(544);
  check_segments<DType::q5_0>(544);
  check_segments<DType::q5_1>(544);
  check_segments<DType::q4_k>(768);
  check_segments<DType::q5_k>(768);
  check_segments<DType::q6_k>(768);
}

struct Seq {
  int n_past, n_new;
};

// The plan of `specs`, with its page tables (scattered pages).
struct Planned {
  cuda::AttnPlan plan;
  std::vector<std::vector<int32_t>> tables;
  std::vector<AttentionSeq> seqs;
  int64_t n_pages = 0;
};

Planned plan_for(const std::vector<Seq>& specs, const cuda::AttnShape& shape, int sm_count) {
  Planned p;
  int q_row = 0;
  int32_t next = 0;
  for (const Seq& s : specs) {
    const int pages = (s.n_past + s.n_new + shape.page_size - 1) / shape.page_size;
    std::vector<int32_t> t(static_cast<size_t>(pages));
    for (int i = 0; i < pages; ++i) t[size_t(i)] = (next + 7 * i) % 100000;  // not contiguous
    next += 1;
    p.tables.push_back(t);
    p.seqs.push_back({nullptr, s.n_past, s.n_new, q_row});
    q_row += s.n_new;
  }
  for (size_t i = 0; i < p.seqs.size(); ++i) p.seqs[i].page_table = p.tables[i].data();
  p.n_pages = 100000;
  cuda::plan_attention(p.seqs, shape, p.n_pages, sm_count, p.plan);
  return p;
}

std::vector<cuda::AttnItem> items_of(const cuda::AttnPlan& plan) {
  std::vector<cuda::AttnItem> items(size_t(plan.n_items));
  std::memcpy(items.data(), plan.blob.data(), items.size() * sizeof(cuda::AttnItem));
  return items;
}

TEST(CudaHost, AttentionPlanCoversEveryQueryOnceAndEveryKeyOfItsTile) {
  const cuda::AttnShape shape{8, 2, 64, 3};  // group 4: 4 heads per block, 4 positions per tile
  for (int sms : {1, 132}) {
    const std::vector<Seq> specs{{0, 5}, {37, 1}, {20, 19}, {3000, 1}, {100, 40}};
    const Planned p = plan_for(specs, shape, sms);
    EXPECT_EQ(p.plan.heads_per_block, 4);
    EXPECT_EQ(p.plan.grid_y, 2);
    const auto items = items_of(p.plan);
    std::vector<int> covered(size_t(p.seqs.back().q_row + p.seqs.back().n_new), 0);
    std::vector<int32_t> firsts;
    for (size_t i = 0; i < items.size();) {
      const cuda::AttnItem& first = items[i];
      ASSERT_EQ(first.split, 0);
      if (first.n_split > 1) firsts.push_back(int32_t(i));
      const int n_keys = first.pos0 + first.n_q;
      int expect_begin = 0;
      for (int sp = 0; sp < first.n_split; ++sp, ++i) {
        const cuda::AttnItem& it = items[i];
        EXPECT_EQ(it.q_row, first.q_row);
        EXPECT_EQ(it.split, sp);
        EXPECT_EQ(it.k_begin, expect_begin);
        EXPECT_EQ(it.k_begin % cuda::kAttnKeys, 0);
        EXPECT_LT(it.k_begin, it.k_end);
        expect_begin = it.k_end;
      }
      EXPECT_EQ(expect_begin, n_keys);  // the pieces tile [0, n_keys)
      for (int q = 0; q < first.n_q; ++q) ++covered[size_t(first.q_row + q)];
    }
    EXPECT_TRUE(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; }));
    ASSERT_EQ(p.plan.n_combine, int(firsts.size()));
    EXPECT_TRUE(
        std::equal(firsts.begin(), firsts.end(), p.plan.blob.begin() + p.plan.combine_offset));
    // Each item's table in the blob is its sequence's.
    for (const cuda::AttnItem& it : items) {
      const auto s = std::find_if(p.seqs.begin(), p.seqs.end(), [&](const AttentionSeq& q) {
        return it.q_row >= q.q_row && it.q_row < q.q_row + q.n_new;
      });
      ASSERT_NE(s, p.seqs.end());
      const size_t si = size_t(s - p.seqs.begin());
      for (size_t e = 0; e < p.tables[si].size(); ++e) {
        ASSERT_EQ(p.plan.blob[size_t(it.table) + e], p.tables[si][e]);
      }
    }
    if (sms == 1) {
      EXPECT_EQ(p.plan.n_combine, 0) << "enough blocks for one SM: nothing is split";
      EXPECT_EQ(p.plan.partial_floats, 0);
    } else {
      EXPECT_GT(p.plan.n_combine, 0) << "the 3000-token decode is split";
      EXPECT_EQ(p.plan.partial_floats,
                int64_t(p.plan.n_items) * p.plan.grid_y * cuda::kAttnRows * (64 + 2));
    }
  }
}

TEST(CudaHost, AttentionPlanOfABatchWithoutNewTokensIsEmpty) {
  const Planned p = plan_for({{10, 0}, {0, 0}}, cuda::AttnShape{4, 2, 64, 16}, 132);
  EXPECT_EQ(p.plan.n_items, 0);
  EXPECT_EQ(p.plan.n_combine, 0);
  EXPECT_EQ(p.plan.partial_floats, 0);
}

// The kernels' arithmetic, on the host, over a plan: per item and row an
// online softmax over its keys (masked past the row's position), written
// out when the tile is whole, else combined across the tile's pieces.
std::vector<float> run_plan(const Planned& p, const cuda::AttnShape& sh, const float* K,
                            const float* V, const std::vector<float>& q, float scale) {
  const int hd = sh.head_dim, hpb = p.plan.heads_per_block, group = sh.n_heads / sh.n_kv_heads;
  const int64_t q_dim = int64_t(sh.n_heads) * hd, kv_dim = int64_t(sh.n_kv_heads) * hd;
  std::vector<float> out(q.size(), NAN);
  struct Partial {
    double m, l;
    std::vector<double> acc;
  };
  std::map<std::pair<int, int>, std::vector<Partial>> pieces;  // (first item, head block, row)
  const auto items = items_of(p.plan);
  for (size_t ii = 0; ii < items.size(); ++ii) {
    const cuda::AttnItem& it = items[ii];
    const int32_t* table = p.plan.blob.data() + it.table;
    for (int hb = 0; hb < p.plan.grid_y; ++hb) {
      for (int r = 0; r < it.n_q * hpb; ++r) {
        const int pos = it.pos0 + r / hpb, h = hb * hpb + r % hpb, kvh = h / group;
        const float* qr = q.data() + int64_t(it.q_row + r / hpb) * q_dim + int64_t(h) * hd;
        Partial pr{-INFINITY, 0.0, std::vector<double>(size_t(hd), 0.0)};
        for (int key = it.k_begin; key < it.k_end && key <= pos; ++key) {
          const int64_t slot =
              int64_t(table[key / sh.page_size]) * sh.page_size + key % sh.page_size;
          const float* kr = K + slot * kv_dim + int64_t(kvh) * hd;
          const float* vr = V + slot * kv_dim + int64_t(kvh) * hd;
          double s = 0.0;
          for (int c = 0; c < hd; ++c) s += double(qr[c]) * scale * kr[c];
          const double m_new = std::max(pr.m, s);
          const double corr = std::exp(pr.m - m_new), e = std::exp(s - m_new);
          pr.l = pr.l * corr + e;
          for (int c = 0; c < hd; ++c) pr.acc[size_t(c)] = pr.acc[size_t(c)] * corr + e * vr[c];
          pr.m = m_new;
        }
        float* o = out.data() + int64_t(it.q_row + r / hpb) * q_dim + int64_t(h) * hd;
        if (it.n_split == 1) {
          for (int c = 0; c < hd; ++c) o[c] = float(pr.acc[size_t(c)] / pr.l);
        } else {
          auto& v = pieces[{int(ii) - it.split, (hb << 16) | r}];
          v.push_back(std::move(pr));
          if (int(v.size()) == it.n_split) {  // the combine kernel
            double M = -INFINITY, L = 0.0;
            for (const Partial& x : v) M = std::max(M, x.m);
            std::vector<double> A(size_t(hd), 0.0);
            for (const Partial& x : v) {
              const double w = x.m == -INFINITY ? 0.0 : std::exp(x.m - M);
              L += x.l * w;
              for (int c = 0; c < hd; ++c) A[size_t(c)] += x.acc[size_t(c)] * w;
            }
            for (int c = 0; c < hd; ++c) o[c] = float(A[size_t(c)] / L);
          }
        }
      }
    }
  }
  return out;
}

TEST(CudaHost, AttentionPlanExecutedOnTheHostMatchesReference) {
  for (int group : {1, 4, 5, 32}) {
    for (int ps : {1, 16}) {
      const cuda::AttnShape sh{2 * group, 2, 20, ps};
      const std::vector<Seq> specs{{0, 5}, {37, 1}, {20, 19}, {700, 1}, {300, 40}};
      Planned p = plan_for(specs, sh, 132);
      // A pool holding exactly the pages the tables use, filled at random.
      int32_t max_page = 0;
      for (const auto& t : p.tables)
        max_page = std::max(max_page, *std::max_element(t.begin(), t.end()));
      const KvPoolShape pool_shape{1, sh.n_kv_heads, sh.head_dim, ps, max_page + 1};
      auto ref = make_reference_backend();
      auto pool = ref->make_kv_pool(pool_shape);
      ASSERT_TRUE(pool);
      const size_t floats = size_t(max_page + 1) * size_t(ps) * size_t(sh.n_kv_heads * sh.head_dim);
      const auto k = test::random_vec(floats, 5), v = test::random_vec(floats, 6);
      std::memcpy(pool->k(0), k.data(), floats * 4);
      std::memcpy(pool->v(0), v.data(), floats * 4);
      int rows = 0;
      for (const Seq& s : specs) rows += s.n_new;
      const auto q = test::random_vec(size_t(rows) * size_t(sh.n_heads * sh.head_dim), 7);
      const float scale = 1.0f / std::sqrt(float(sh.head_dim));
      std::vector<float> want(q.size());
      ref->attention(*pool, 0, q.data(), want.data(), p.seqs, sh.n_heads, scale);
      const std::vector<float> got = run_plan(p, sh, static_cast<const float*>(pool->k(0)),
                                              static_cast<const float*>(pool->v(0)), q, scale);
      const std::vector<float> tol(q.size(), test::max_abs(v));
      test::expect_close(got.data(), want.data(), tol.data(), q.size(), 1e-5,
                         "plan group " + std::to_string(group) + " page " + std::to_string(ps));
    }
  }
}

}  // namespace
}  // namespace rc::kernels
