#include "mask-oracle.h"

#include "structured/json-closing.h"

namespace rc::test {

bool brute_force_allows(const Grammar& g, const std::vector<Thread>& threads,
                        const std::string& piece) {
  if (piece.empty()) return false;
  // Scratch kept between calls: a vocabulary's worth of calls per mask.
  thread_local std::vector<Thread> cur, next;
  const std::vector<Thread>* from = &threads;
  for (char c : piece) {
    next.clear();
    for (const Thread& t : *from) feed(g, t, static_cast<uint8_t>(c), next);
    if (next.empty()) return false;
    dedupe(next);
    cur.swap(next);
    from = &cur;
  }
  return true;
}

::testing::AssertionResult mask_equals_brute_force(JsonConstraint& c, const Grammar& g,
                                                   const TokenTrie& trie,
                                                   std::vector<int32_t>* allowed) {
  const std::vector<bool> mask = c.allowed_tokens(false);
  // Near the budget a token must also leave the document closable in the
  // tokens left after it (a byte each).
  const uint32_t limit = c.budget() <= 0 ? 0 : static_cast<uint32_t>(c.budget() - 1);
  auto closes = [&](const std::string& piece) {
    if (limit >= g.closing_bound) return true;
    std::vector<Thread> cur = c.threads();
    for (char ch : piece) {
      std::vector<Thread> next;
      for (const Thread& t : cur) feed(g, t, static_cast<uint8_t>(ch), next);
      cur = std::move(next);
    }
    for (const Thread& t : cur) {
      if (structured::closing_bytes(g, t) <= limit) return true;
    }
    return false;
  };
  for (int id = 0; id < trie.n_vocab(); ++id) {
    const bool expect =
        brute_force_allows(g, c.threads(), trie.piece(id)) && closes(trie.piece(id));
    if (mask[id] != expect) {
      return ::testing::AssertionFailure()
             << "token " << id << " '" << trie.piece(id) << "' is "
             << (mask[id] ? "allowed" : "refused") << " by the mask, brute force says the opposite";
    }
    if (expect && allowed) allowed->push_back(id);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace rc::test
