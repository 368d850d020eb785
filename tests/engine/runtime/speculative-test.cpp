// Drafted decoding (drafter.h, Scheduler::verify_draft) never changes what
// is generated: greedy outputs equal plain decoding's token for token;
// sampled outputs with the same seed are the same tokens, and with
// different seeds the two modes draw from the same distribution; the cache
// holds its invariants after every step with drafts in flight.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "prompt-ids.h"
#include "random-gguf.h"
#include "runtime-fixture.h"
#include "runtime/draft-costs.h"
#include "runtime/drafter.h"

namespace rc::runtime {
namespace {

using testing::prompt_ids;

using testing::RuntimeRig;

// A random-weight model file for the test's lifetime ("" keeps the bundled one).
class ModelFile {
 public:
  explicit ModelFile(const std::string& arch) {
    if (arch.empty()) return;
    rc::testing::RandomModelSpec s;
    s.arch = arch;
    s.type = "q4_k";
    s.dim = 256, s.heads = 4, s.kv_heads = 2, s.ffn = 512, s.layers = 2, s.vocab = 400;
    s.ctx = 2048, s.chat_template = "";
    if (arch == "qwen3") s.head_dim = 64;
    path_ = (std::filesystem::temp_directory_path() /
             ("rc-spec-" + arch + "-" + std::to_string(::getpid()) + ".gguf"))
                .string();
    EXPECT_TRUE(rc::testing::write_random_model(s, path_).ok());
  }
  ~ModelFile() {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// cache: radix, radix-page16, hash16 or off (as --cache names them).
RuntimeRig::Options options(const std::string& model, bool speculate, const std::string& cache) {
  RuntimeRig::Options o;
  o.model_path = model;
  o.cache = cache == "radix-page16" ? "radix" : cache == "hash16" ? "hash" : cache;
  o.page_size = cache == "radix-page16" || cache == "hash16" ? 16 : 1;
  o.pool_tokens = 16384;
  o.sched.speculate = speculate;
  return o;
}

struct Outcome {
  std::vector<std::vector<int32_t>> outputs;
  int drafted = 0, accepted = 0;
};

// The prompts in waves: each wave is submitted at once and run to
// completion (so later waves can draft from earlier replies in the tree).
// A prompt's seed follows from its tokens, so a regeneration samples what
// the first request sampled (and drafts from it are accepted).
Outcome run_waves(const RuntimeRig::Options& o,
                  const std::vector<std::vector<std::vector<int32_t>>>& waves, int max_tokens,
                  const SamplingParams& sampling = {}) {
  RuntimeRig rig(o);
  Outcome run;
  for (const auto& wave : waves) {
    std::vector<RequestId> wave_ids;
    for (const auto& p : wave) {
      SamplingParams sp = sampling;
      sp.seed = std::accumulate(p.begin(), p.end(), uint64_t(17),
                                [](uint64_t h, int32_t t) { return h * 31 + uint64_t(t); });
      wave_ids.push_back(rig.add(p, max_tokens, sp));
    }
    rig.run_to_completion();
    for (RequestId id : wave_ids) {
      run.outputs.push_back(rig.result(id).tokens);
      run.drafted += rig.result(id).metrics.drafted_tokens;
      run.accepted += rig.result(id).metrics.accepted_tokens;
    }
  }
  rig.expect_all_released();
  return run;
}

// Regenerations, branches sharing a prefix, prompts that repeat themselves
// (prompt lookup), and unrelated prompts, several in flight at once.
std::vector<std::vector<std::vector<int32_t>>> mixed_waves(int vocab) {
  const std::vector<int32_t> a = prompt_ids(40, vocab, 1), b = prompt_ids(90, vocab, 2),
                             c = prompt_ids(17, vocab, 3);
  std::vector<int32_t> repeat = prompt_ids(30, vocab, 4);
  const std::vector<int32_t> again = repeat;
  repeat.insert(repeat.end(), again.begin(), again.end());
  std::vector<int32_t> branch = a;
  branch.resize(25);
  for (int32_t t : prompt_ids(9, vocab, 5)) branch.push_back(t);
  return {{a, b, c}, {a, b, repeat}, {a, branch, c, prompt_ids(60, vocab, 6)}, {branch, repeat, b}};
}

class SpeculativeGreedy : public ::testing::TestWithParam<std::string> {};

TEST_P(SpeculativeGreedy, SameTokensAsPlainDecoding) {
  ModelFile file(GetParam());
  for (const std::string cache : {"radix", "radix-page16", "hash16", "off"}) {
    const auto waves = mixed_waves(file.path().empty() ? 512 : 400);
    const Outcome plain = run_waves(options(file.path(), false, cache), waves, 40);
    const Outcome drafted = run_waves(options(file.path(), true, cache), waves, 40);
    ASSERT_EQ(plain.outputs.size(), drafted.outputs.size());
    for (size_t i = 0; i < plain.outputs.size(); ++i) {
      EXPECT_EQ(plain.outputs[i], drafted.outputs[i]) << cache << ", request " << i;
    }
    EXPECT_EQ(plain.drafted, 0);
    // Every setting drafts (prompt lookup needs no tree); the tree's
    // regenerations are accepted.
    EXPECT_GT(drafted.drafted, 0) << cache;
    if (cache == "radix") EXPECT_GT(drafted.accepted, 40) << cache;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SpeculativeGreedy, ::testing::Values("", "llama", "qwen2"),
                         [](const auto& info) {
                           return info.param.empty() ? std::string("bundled") : info.param;
                         });

// Sampling: with the same seeds the same tokens (each position is sampled
// with the request's own RNG draws, in the same order as plain decoding).
TEST(SpeculativeSampling, SameSeedSameTokens) {
  ModelFile file("llama");
  SamplingParams sp;
  sp.temperature = 0.8f;
  sp.top_p = 0.95f;
  sp.repetition_penalty = 1.1f;
  const auto waves = mixed_waves(400);
  const Outcome plain = run_waves(options(file.path(), false, "radix"), waves, 32, sp);
  const Outcome drafted = run_waves(options(file.path(), true, "radix"), waves, 32, sp);
  EXPECT_EQ(plain.outputs, drafted.outputs);
  EXPECT_GT(drafted.accepted, 32);
}

// And with disjoint seeds, the two modes' samples of a drafted position
// come from the same distribution: a two-sample chi-square test over the
// tokens seen there (rare ones pooled), at the 0.1% level. The prompt is a
// regeneration on the bundled model, so that position is often drafted
// from the tree (the first reply's tokens).
TEST(SpeculativeSampling, SameDistributionAsPlainDecoding) {
  SamplingParams sp;
  sp.temperature = 1.0f;
  sp.top_k = 8;
  constexpr int kSamples = 300, kPosition = 3;
  auto histogram = [&](bool speculate, uint64_t seed0, int* accepted) {
    RuntimeRig rig(options("", speculate, "radix"));
    const std::vector<int32_t> prompt = rig.tokens_of("The radix tree keeps the cache of");
    SamplingParams first = sp;
    first.seed = 7;
    rig.add(prompt, kPosition + 2, first);  // the reply regenerations draft from
    rig.run_to_completion();
    std::map<int32_t, int> h;
    for (int i = 0; i < kSamples; ++i) {
      SamplingParams p = sp;
      p.seed = seed0 + uint64_t(i);
      const RequestId id = rig.add(prompt, kPosition + 1, p);
      rig.run_to_completion();
      ++h[rig.result(id).tokens[kPosition]];
      *accepted += rig.result(id).metrics.accepted_tokens;
    }
    return h;
  };
  int accepted_plain = 0, accepted = 0;
  const auto a = histogram(false, 1000, &accepted_plain);
  const auto b = histogram(true, 5000, &accepted);
  EXPECT_EQ(accepted_plain, 0);
  EXPECT_GT(accepted, 0);  // drafts were kept, so the drafted path was sampled
  // Bins with at least 10 samples in all; the rest pooled.
  std::map<int32_t, std::pair<double, double>> both;
  for (auto [t, n] : a) both[t].first = n;
  for (auto [t, n] : b) both[t].second = n;
  std::vector<std::pair<double, double>> bins;
  std::pair<double, double> rest{0, 0};
  for (auto [t, n] : both) {
    if (n.first + n.second >= 10) {
      bins.push_back(n);
    } else {
      rest.first += n.first;
      rest.second += n.second;
    }
  }
  if (rest.first + rest.second > 0) bins.push_back(rest);
  ASSERT_GE(bins.size(), 2u);
  double chi2 = 0;
  for (auto [x, y] : bins) chi2 += (x - y) * (x - y) / (x + y);  // equal sample sizes
  // The 0.1% critical value (Wilson-Hilferty: z = 3.09).
  const double k = double(bins.size() - 1), c = 2.0 / (9.0 * k);
  const double crit = k * std::pow(1.0 - c + 3.09 * std::sqrt(c), 3.0);
  EXPECT_LT(chi2, crit) << "chi-square " << chi2 << " with " << k << " degrees of freedom";
}

// Many requests with drafts in flight on a small pool (eviction, pages of
// 16, cancellations): the cache's invariants hold after every step
// (RuntimeRig checks them) and everything is released at the end.
TEST(SpeculativeScheduler, CacheInvariantsHoldUnderLoad) {
  ModelFile file("llama");
  for (const std::string cache : {"radix", "radix-page16"}) {
    RuntimeRig::Options o = options(file.path(), true, cache);
    o.pool_tokens = 1024;
    o.sched.max_running = 6;
    o.sched.max_batch_tokens = 96;
    o.sched.prefill_chunk = 32;
    RuntimeRig rig(o);
    const std::vector<int32_t> base = prompt_ids(64, 400, 11);
    uint32_t x = 5;
    int cancelled = 0;
    for (int round = 0; round < 6; ++round) {
      std::vector<RequestId> started;
      for (int i = 0; i < 8; ++i) {
        x = x * 1664525u + 1013904223u;
        std::vector<int32_t> p(base.begin(), base.begin() + 8 + (x >> 8) % 56);
        for (int32_t t : prompt_ids(int((x >> 4) % 20), 400, x)) p.push_back(t);
        started.push_back(rig.add(p, 8 + int((x >> 12) % 40)));
      }
      for (int s = 0; s < 5; ++s) rig.sched().step();
      rig.sched().cancel(started[(x >> 3) % started.size()]);
      ++cancelled;
      rig.run_to_completion();
    }
    rig.expect_all_released();
    EXPECT_EQ(cancelled, 6);
  }
}

// What a viewer sees of drafted decoding: a greedy regeneration drafts the
// earlier reply back from the node that holds it, and the cache's draft
// events name that node and add up to the request's drafted and accepted
// counts (wasted = drafted - accepted); prompt-lookup drafts name no node.
// A request that finishes inside a drafted step: the engine's totals,
// published as it finishes (what a caller reads in its finished callback),
// already count that step's draft.
TEST(SpeculativeTotals, PublishedAsTheRequestFinishesWithItsLastDraft) {
  RuntimeRig rig(options("", true, "radix"));
  const std::vector<int32_t> prompt = rig.tokens_of("The radix tree keeps the cache of");
  rig.add(prompt, 40);
  rig.run_to_completion();
  SchedulerTotals at_finish;
  rig.sched().set_before_finish([&] { at_finish = rig.sched().totals(); });
  const RequestId again = rig.add(prompt, 40);
  rig.run_to_completion();
  const RequestMetrics& m = rig.result(again).metrics;
  ASSERT_GT(m.drafted_tokens, 0);
  EXPECT_EQ(m.drafted_tokens, m.accepted_tokens) << "a greedy regeneration keeps its drafts";
  EXPECT_EQ(at_finish.drafted_tokens, rig.sched().totals().drafted_tokens);
  EXPECT_EQ(at_finish.accepted_tokens, rig.sched().totals().accepted_tokens);
  EXPECT_EQ(at_finish.draft_steps, rig.sched().totals().draft_steps);
}

TEST(SpeculativeEvents, RegenerateNamesTheEarlierRepliesNode) {
  RuntimeRig rig(options("", true, "radix"));
  const std::vector<int32_t> prompt = rig.tokens_of("The radix tree keeps the cache of");
  const RequestId first = rig.add(prompt, 40);
  rig.run_to_completion();
  std::vector<CacheEvent> events;
  ASSERT_FALSE(rig.cache().events().drain(events));
  events.clear();
  const RequestId again = rig.add(prompt, 40);
  rig.run_to_completion();
  ASSERT_FALSE(rig.cache().events().drain(events));
  ASSERT_EQ(rig.result(again).tokens, rig.result(first).tokens);

  // The deepest node on the path prompt + reply: the reply's own tokens.
  std::vector<int32_t> text = prompt;
  const std::vector<int32_t>& reply = rig.result(first).tokens;
  text.insert(text.end(), reply.begin(), reply.end());
  const CacheSnapshot snap = rig.cache().snapshot();
  std::map<NodeId, const CacheNodeInfo*> by_id;
  for (const CacheNodeInfo& n : snap.nodes) by_id[n.id] = &n;
  NodeId reply_node = kRootNode;
  size_t depth = 0, reply_start = 0;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CacheNodeInfo& n : snap.nodes) {
      if (n.id == kRootNode || n.parent != reply_node || depth + n.tokens.size() > text.size() ||
          !std::equal(n.tokens.begin(), n.tokens.end(), text.begin() + ptrdiff_t(depth)))
        continue;
      reply_node = n.id;
      reply_start = depth;
      depth += n.tokens.size();
      deeper = true;
      break;
    }
  }
  ASSERT_NE(reply_node, kRootNode);
  EXPECT_GE(reply_start, prompt.size()) << "the node holds reply tokens only";
  EXPECT_GE(depth, text.size() - 1) << "and all of the reply the first request computed";

  uint64_t drafted = 0, accepted = 0, from_reply = 0, kept_from_reply = 0;
  for (const CacheEvent& e : events) {
    if (e.kind != CacheEventKind::draft) continue;
    drafted += e.token_count;
    accepted += e.page_count;
    EXPECT_LE(e.page_count, e.token_count);
    if (e.node == kNoNode) continue;  // from the prompt
    EXPECT_EQ(e.node, reply_node) << "draft event " << e.seq;
    EXPECT_EQ(e.parent, by_id.at(reply_node)->parent);
    from_reply += e.token_count;
    kept_from_reply += e.page_count;
  }
  const RequestMetrics& m = rig.result(again).metrics;
  EXPECT_EQ(drafted, uint64_t(m.drafted_tokens));
  EXPECT_EQ(accepted, uint64_t(m.accepted_tokens));
  // Most of the reply came back as drafts from its node, and was kept.
  EXPECT_GE(from_reply, reply.size() / 2);
  EXPECT_GE(kept_from_reply, reply.size() / 2);
}

// The drafter itself: tree continuation first, else the longest prompt
// match, most recent among equals; nothing when nothing matches.
TEST(Drafter, PromptLookupTakesTheLongestMostRecentMatch) {
  CacheConfig cc;
  cc.policy = CachePolicy::off;
  cc.total_pages = 64;
  auto cache = make_kv_cache(cc).value();
  //                          0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18
  const std::vector<int32_t> s{5, 6, 7, 8, 9, 1, 0, 6, 7, 8, 9, 2, 3, 4, 5, 6, 7, 8, 9};
  DraftBudget budget;
  Draft d = propose_draft(*cache, s, budget, 3);
  EXPECT_EQ(d.source, DraftSource::prompt);
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{1, 0, 6}));  // "5 6 7 8 9" (5) beats "6 7 8 9"
  budget.update(DraftSource::prompt, 2, 0);
  EXPECT_EQ(budget.min_match(), DraftBudget::kMinMatch + 2);
  EXPECT_TRUE(propose_draft(*cache, s, budget, 3).tokens.empty());
  const std::vector<int32_t> t{1, 2, 3, 4, 9, 1, 2, 3, 4, 8, 1, 2, 3, 4};
  d = propose_draft(*cache, t, DraftBudget{}, 5);
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{8, 1, 2, 3, 4}));  // the latest "1 2 3 4"
}

TEST(Drafter, TreeContinuationFollowsTheWholeSequence) {
  CacheConfig cc;
  cc.policy = CachePolicy::radix;
  cc.total_pages = 64;
  auto cache = make_kv_cache(cc).value();
  const std::vector<int32_t> seq{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<PageId> pages;
  ASSERT_TRUE(cache->alloc_pages(8, pages).ok());
  ASSERT_TRUE(cache->insert(seq, pages).ok());
  Draft d = propose_draft(*cache, std::vector<int32_t>{1, 2, 3}, DraftBudget{}, 4);
  EXPECT_EQ(d.source, DraftSource::tree);
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{4, 5, 6, 7}));
  const NodeId leaf = d.node.id;
  EXPECT_NE(leaf, kNoNode);
  d = propose_draft(*cache, std::vector<int32_t>{1, 2, 9}, DraftBudget{}, 4);
  EXPECT_NE(d.source, DraftSource::tree);
  EXPECT_EQ(d.node.id, kNoNode);
  // A tree budget spent by a draft that failed at once drafts no more from
  // the tree.
  DraftBudget spent;
  spent.update(DraftSource::tree, 4, 0);
  EXPECT_TRUE(propose_draft(*cache, std::vector<int32_t>{1, 2, 3}, spent, 4).tokens.empty());
  // A branch after 5 splits the leaf there: a draft from {1, 2} reads the
  // rest of the upper node and goes down the busier child; the node it
  // names is the deepest it read from.
  const std::vector<int32_t> branch{1, 2, 3, 4, 5, 9};
  std::vector<PageId> more = cache->match_prefix(branch).pages;
  ASSERT_EQ(more.size(), 5u);
  ASSERT_TRUE(cache->alloc_pages(1, more).ok());
  ASSERT_TRUE(cache->insert(branch, more).ok());
  (void)cache->match_prefix(seq);  // the first leaf is the busier child
  d = propose_draft(*cache, std::vector<int32_t>{1, 2}, DraftBudget{}, 4);
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{3, 4, 5, 6}));
  EXPECT_EQ(d.node.id, leaf) << "the lower half keeps the leaf's id";
  d = propose_draft(*cache, std::vector<int32_t>{1, 2}, DraftBudget{}, 2);
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{3, 4}));
  EXPECT_NE(d.node.id, leaf) << "a draft that ends in the upper node names it";
  EXPECT_TRUE(cache->check_integrity().ok());
}

TEST(Drafter, BudgetGrowsOnSuccessAndBacksOffOnMisses) {
  DraftBudget b;
  const int start = b.limit(DraftSource::prompt);
  EXPECT_EQ(start, DraftBudget::kStartTokens);
  b.update(DraftSource::prompt, start, start);
  EXPECT_EQ(b.limit(DraftSource::prompt), std::min(DraftBudget::kMaxTokens, 2 * start));
  EXPECT_EQ(b.limit(DraftSource::tree), DraftBudget::kStartTokens);  // sources apart
  b.update(DraftSource::prompt, b.limit(DraftSource::prompt), 1);
  EXPECT_EQ(b.limit(DraftSource::prompt), 2);
  const int m = b.min_match();
  b.update(DraftSource::prompt, 2, 0);
  EXPECT_EQ(b.limit(DraftSource::prompt), 1);
  EXPECT_EQ(b.min_match(), m + 2);
  for (int i = 0; i < 8; ++i) b.update(DraftSource::tree, 63, 63);
  EXPECT_EQ(b.limit(DraftSource::tree), DraftBudget::kMaxTokens);
}

TEST(Drafter, GreedyRequestsDraftTheWholeTreeContinuationAtOnce) {
  EXPECT_EQ(DraftBudget(true).limit(DraftSource::tree), DraftBudget::kMaxTokens);
  EXPECT_EQ(DraftBudget(true).limit(DraftSource::prompt), DraftBudget::kStartTokens);
  DraftBudget b(true);
  b.update(DraftSource::tree, DraftBudget::kMaxTokens, 5);
  EXPECT_EQ(b.limit(DraftSource::tree), 6);
}

// The draft gate: verify while 1 + E(k) tokens per verifying step beat a
// token per decode step, from measured step times and keep rates.
TEST(DraftCosts, DraftsPayOnlyWhileTheirTokensAreKept) {
  DraftCosts c;
  EXPECT_TRUE(c.worth(DraftSource::prompt, 8));  // nothing measured yet
  c.note_step(1, 1.0);
  EXPECT_TRUE(c.worth(DraftSource::prompt, 8));  // a 9-token step not measured yet
  c.note_step(9, 4.0);
  EXPECT_DOUBLE_EQ(c.step_ms(9), 4.0);
  // Whole drafts kept: E(8) near 8, 9 tokens for the time of 4.
  for (int i = 0; i < 20; ++i) c.note_draft(DraftSource::prompt, 8, 8);
  EXPECT_GT(c.keep_rate(DraftSource::prompt), 0.95);
  EXPECT_TRUE(c.worth(DraftSource::prompt, 8));
  // Drafts that fail at once: refused, but tried again every kExploreEvery.
  for (int i = 0; i < 40; ++i) c.note_draft(DraftSource::prompt, 8, 0);
  EXPECT_LT(c.keep_rate(DraftSource::prompt), 0.15);
  int tried = 0;
  for (int i = 0; i < 2 * DraftCosts::kExploreEvery; ++i) tried += c.worth(DraftSource::prompt, 8);
  EXPECT_EQ(tried, 2);
  // The sources keep their own rates.
  EXPECT_DOUBLE_EQ(c.keep_rate(DraftSource::tree), 0.75);
}

TEST(DraftCosts, TheStepTimeDecides) {
  // At the prior keep rate of 0.75, 8 draft tokens are worth 1 + 2.70
  // tokens: a verifying step of 3 decode steps pays, one of 4 does not.
  DraftCosts cheap, dear;
  cheap.note_step(1, 1.0);
  cheap.note_step(9, 3.0);
  dear.note_step(1, 1.0);
  dear.note_step(9, 4.0);
  EXPECT_TRUE(cheap.worth(DraftSource::prompt, 8));
  EXPECT_FALSE(dear.worth(DraftSource::prompt, 8));
}

// In a batch a draft pays for what it adds to the step: with 8 requests
// decoding in a step of 2 ms, 8 more tokens (a 16-token step of 4 ms) must
// add 8 tokens, which a keep rate of 0.75 does not (8 + 2.70 in 4 ms is
// fewer per ms than 8 in 2 ms); alone, a 9-token step of 2 ms pays.
TEST(DraftCosts, InABatchTheDraftPaysForWhatItAdds) {
  DraftCosts c;
  c.note_step(1, 1.0);
  c.note_step(8, 2.0);
  c.note_step(9, 2.0);
  c.note_step(16, 4.0);
  EXPECT_TRUE(c.worth(DraftSource::prompt, 8, 1));
  EXPECT_FALSE(c.worth(DraftSource::prompt, 8, 8));
}

}  // namespace
}  // namespace rc::runtime
