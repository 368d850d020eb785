// `radixchat-cli cache-demo`: a scripted conversation on character tokens
// that shows the radix tree at work before any model is loaded: a shared
// system prompt, a second turn, a branch, a pinned prompt and an eviction in
// a small pool. Each step prints a caption, what was reused, and the tree.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "radixchat/cache-text.h"
#include "radixchat/cache.h"

namespace rc::cli {
namespace {

const char* kSystem = "You are a helpful assistant.\n";

std::string show(std::span<const Token> tokens) {
  std::string s;
  for (Token t : tokens) {
    if (t == '\n')
      s.append("⏎");
    else
      s.push_back(char(t));
  }
  return s;
}

struct Demo {
  KvCache& cache;
  int step = 0;
  TreeTextOptions view;
  Status problem;  // the first lock/unlock/pin/insert that failed: the demo fails

  void note(Status s) {
    if (s.ok() || !problem.ok()) return;
    std::printf("         %s\n", s.to_string().c_str());
    problem = std::move(s);
  }

  // Runs one request through the same protocol as the engine and returns the
  // node it inserted (locked when `keep` is true).
  NodeHandle request(const std::string& caption, const std::string& text) {
    std::vector<Token> key(text.begin(), text.end());
    std::printf("\n── step %d · %s\n", ++step, caption.c_str());
    std::printf("request  \"%s\" (%zu tokens)\n", show(key).c_str(), key.size());
    const int64_t evicted_before = int64_t(cache.stats().evicted_tokens);
    MatchResult m = cache.match_prefix(key);
    note(cache.lock(m.node));
    std::vector<PageId> table = m.pages;
    Status s = cache.alloc_pages(int64_t(key.size()) - m.tokens, table);
    if (!s.ok()) {
      std::printf("         %s\n", s.to_string().c_str());
      note(cache.unlock(m.node));
      return m.node;
    }
    auto ins = cache.insert(key, table);
    if (!ins.ok()) note(ins.status());
    note(cache.unlock(m.node));
    const int64_t evicted = int64_t(cache.stats().evicted_tokens) - evicted_before;
    std::printf("reused   %lld tokens from the cache, prefilled %lld", (long long)m.tokens,
                (long long)(int64_t(key.size()) - m.tokens));
    if (evicted) std::printf(", evicted %lld to make room", (long long)evicted);
    std::printf("\n");
    print_tree();
    return ins.ok() ? ins->node : m.node;
  }

  void print_tree() {
    std::printf("%s", render_cache_tree(cache.snapshot(), view).c_str());
    CacheStats st = cache.stats();
    std::printf("pool     %lld pages: %lld free, %lld evictable (%lld pinned), %lld protected\n",
                (long long)st.total_pages, (long long)st.free_pages, (long long)st.evictable_pages,
                (long long)st.pinned_pages, (long long)st.protected_pages);
  }
};

int run_cache_demo(int64_t pool_tokens) {
  CacheConfig cfg;
  cfg.total_pages = pool_tokens;
  auto made = make_kv_cache(cfg);
  if (!made.ok()) return fail(made.status());
  KvCache& cache = **made;
  Demo d{cache, 0, {}, {}};
  d.view.format_tokens = show;
  d.view.max_span_chars = 40;

  std::printf(
      "RadixChat cache demo: one character = one token, page size 1, a pool of %lld "
      "tokens.\nEach node holds a token span and the KV pages computed for it; a new "
      "request\nreuses the longest cached prefix and prefills only the rest.\n",
      (long long)pool_tokens);
  std::string sys = kSystem;
  std::string a1 = sys + "User: Hi!\n";
  d.request("chat A starts: system prompt + first message, nothing cached yet", a1);
  d.request("chat B starts with the same system prompt: its node is reused and split",
            sys + "User: Name a fruit.\n");
  std::string a2 = a1 + "Bot: Hello!\nUser: Tell a joke.\n";
  NodeHandle turn2 = d.request("chat A, second turn: the whole first turn is a cache hit", a2);
  d.request("chat A is branched (the user edits message 2): only the new branch is prefilled",
            a1 + "Bot: Hello!\nUser: A poem?\n");

  std::printf("\n── step %d · the system prompt is pinned (a saved prompt): LRU skips it\n",
              ++d.step);
  MatchResult m = cache.match_prefix(std::vector<Token>(sys.begin(), sys.end()));
  d.note(cache.pin(m.node));
  d.note(cache.lock(turn2));
  std::printf("         and chat A's second turn is still generating: its path is locked\n");
  d.print_tree();

  d.request(
      "chat C arrives with a long message; the pool is short, so the least recently "
      "used unlocked leaves go",
      sys + "User: Summarise the plot of Hamlet in one line.\n");
  d.note(cache.unlock(turn2));
  std::printf("\n── step %d · chat A's turn finished (unlocked); check_integrity: %s\n", ++d.step,
              cache.check_integrity().to_string().c_str());
  d.print_tree();
  if (!d.problem.ok()) return fail(d.problem);
  return 0;
}

}  // namespace

Command add_cache_demo_command(CLI::App& root) {
  auto* app = root.add_subcommand("cache-demo", "Show the radix KV cache on a scripted chat");
  auto pool = std::make_shared<int64_t>(120);
  app->add_option("--pool-tokens", *pool, "pool size in tokens (default 120)");
  return {app, [pool] { return run_cache_demo(*pool); }};
}

}  // namespace rc::cli
