#include "token-trie.h"

#include <algorithm>
#include <numeric>

#include "json-closing.h"
#include "json-phases.h"
#include "tokenizer/tokenizer.h"

namespace rc::structured {

namespace {

// Bit u set: `byte` is plain string content from UTF-8 state u and the
// bytes below (`below`: the child's safe bits) are too from the next state.
uint8_t safe_through(uint8_t byte, uint8_t below) {
  uint8_t out = 0;
  for (int u = 0; u < kUtf8States; ++u) {
    if (u == 0 && (byte == '"' || byte == '\\' || byte < 0x20)) continue;
    const int next = utf8_next(u, byte);
    if (next >= 0 && ((below >> next) & 1)) out |= uint8_t(1u << u);
  }
  return out;
}

// Bit u set: safe_through, and when tokens end at this node (`ends`), the
// byte leaves no UTF-8 sequence open. `below`: the child's whole bits.
uint8_t whole_through(uint8_t byte, uint8_t below, bool ends) {
  uint8_t out = 0;
  for (int u = 0; u < kUtf8States; ++u) {
    if (u == 0 && (byte == '"' || byte == '\\' || byte < 0x20)) continue;
    const int next = utf8_next(u, byte);
    if (next >= 0 && ((below >> next) & 1) && (!ends || next == 0)) out |= uint8_t(1u << u);
  }
  return out;
}

uint8_t classes_of(uint8_t byte) {
  uint8_t out = 0;
  for (int k = 0; k < kByteClasses; ++k) {
    if (in_byte_class(k, byte)) out |= uint8_t(1u << k);
  }
  return out;
}

}  // namespace

TokenTrie::TokenTrie(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {
  const int32_t n = static_cast<int32_t>(pieces_.size());
  pos_of_.assign(n, -1);
  for (int32_t id = 0; id < n; ++id) {
    if (!pieces_[id].empty()) {
      order_.push_back(id);
    } else {
      outside_.push_back(id);
    }
  }
  // Sorted pieces are the trie's preorder: build it with a path stack.
  std::stable_sort(order_.begin(), order_.end(),
                   [&](int32_t a, int32_t b) { return pieces_[a] < pieces_[b]; });
  nodes_.emplace_back();  // the root
  std::vector<uint32_t> parent(1, 0);
  std::vector<uint32_t> path = {0};  // path[d]: node at depth d
  std::vector<uint32_t> last_child = {0};
  const std::string* prev = nullptr;
  auto close_to = [&](size_t depth, uint32_t at) {
    while (path.size() > depth + 1) {
      nodes_[path.back()].sub_end = at;
      path.pop_back();
      last_child.pop_back();
    }
  };
  for (uint32_t i = 0; i < order_.size(); ++i) {
    const std::string& s = pieces_[order_[i]];
    pos_of_[order_[i]] = static_cast<int32_t>(i);
    size_t common = 0;
    if (prev) {
      while (common < s.size() && common < prev->size() && s[common] == (*prev)[common]) ++common;
    }
    close_to(common, i);
    for (size_t d = common; d < s.size(); ++d) {
      const uint32_t id = static_cast<uint32_t>(nodes_.size());
      Node node;
      node.byte = static_cast<uint8_t>(s[d]);
      node.own_begin = node.own_end = i;
      nodes_.push_back(node);
      parent.push_back(path.back());
      Node& p = nodes_[path.back()];
      if (!p.has_child) p.has_child = true;
      if (last_child.back() != 0) nodes_[last_child.back()].next_sibling = id;
      last_child.back() = id;
      path.push_back(id);
      last_child.push_back(0);
    }
    nodes_[path.back()].own_end = i + 1;
    max_depth_ = std::max(max_depth_, static_cast<int>(s.size()));
    prev = &s;
  }
  close_to(0, static_cast<uint32_t>(order_.size()));
  writable_.assign((order_.size() + 63) / 64, 0);
  starts_.assign(order_.size(), 0);
  for (uint32_t i = 0; i < order_.size(); ++i) {
    const std::string& s = pieces_[order_[i]];
    starts_[i] = static_cast<uint16_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return (static_cast<uint8_t>(c) & 0xC0) != 0x80; }));
    if (std::all_of(s.begin(), s.end(), [](char c) {
          return in_byte_class(kWritableClass, static_cast<uint8_t>(c));
        })) {
      writable_[i >> 6] |= 1ull << (i & 63);
    }
  }
  nodes_[0].sub_end = static_cast<uint32_t>(order_.size());
  std::vector<bool> single(256, false);
  for (const std::string& piece : pieces_) {
    if (piece.size() == 1) single[static_cast<uint8_t>(piece[0])] = true;
  }
  every_byte_ = true;
  for (int b = 0x20; b <= 0xF4; ++b) {
    if ((b < 0x7F || b >= 0x80) && b != 0xC0 && b != 0xC1 && !single[b]) every_byte_ = false;
  }
  // Shortcut facts bottom-up: a node's descendants come after it in
  // preorder, so they are final when it is folded into its parent.
  for (Node& node : nodes_) node.safe = node.whole = node.cls = 0xff;
  for (size_t i = nodes_.size() - 1; i > 0; --i) {
    Node& n = nodes_[i];
    Node& p = nodes_[parent[i]];
    n.safe_in = safe_through(n.byte, n.safe);
    n.whole_in = whole_through(n.byte, n.whole, n.own_end > n.own_begin);
    n.cls_in = n.cls & classes_of(n.byte);
    p.safe &= n.safe_in;
    p.whole &= n.whole_in;
    p.cls &= n.cls_in;
    p.height = static_cast<uint8_t>(std::max<int>(p.height, std::min(255, n.height + 1)));
    n.quote = n.quote || n.byte == '"';
    p.quote = p.quote || n.quote;
  }
}

std::shared_ptr<const TokenTrie> TokenTrie::from_tokenizer(const tok::Tokenizer& tok) {
  std::vector<std::string> pieces(tok.n_vocab());
  for (int32_t id = 0; id < tok.n_vocab(); ++id) {
    const tok::PieceType t = tok.piece_type(id);
    if (t == tok::PieceType::control || t == tok::PieceType::unknown || t == tok::PieceType::unused)
      continue;
    if (tok.is_eog(id)) continue;
    pieces[id] = tok.token_to_piece(id);
  }
  return std::make_shared<TokenTrie>(std::move(pieces));
}

void set_bit_range(std::vector<uint64_t>& bits, uint32_t begin, uint32_t end) {
  if (begin >= end) return;
  const uint32_t first = begin >> 6, last = (end - 1) >> 6;
  const uint64_t head = ~0ull << (begin & 63);             // bits begin.. of the first word
  const uint64_t tail = ~0ull >> (63 - ((end - 1) & 63));  // bits ..end-1 of the last word
  if (first == last) {
    bits[first] |= head & tail;
    return;
  }
  bits[first] |= head;
  for (uint32_t w = first + 1; w < last; ++w) bits[w] = ~0ull;
  bits[last] |= tail;
}

void MaskBuilder::compute(const Grammar& g, const TokenTrie& trie,
                          const std::vector<Thread>& threads, std::vector<uint64_t>& bits,
                          uint32_t limit) {
  g_ = &g;
  limit_ = limit;
  checked_ = limit < g.closing_bound;
  budget_refused_ = false;
  trie_ = &trie;
  bits_ = &bits;
  bits.assign((trie.n_tokens() + 63) / 64, 0);
  if (levels_.size() < static_cast<size_t>(trie.max_depth()) + 2) {
    levels_.resize(trie.max_depth() + 2);
  }
  levels_[0].clear();
  for (const Thread& t : threads) levels_[0].push_back(t);
  visited_ = 0;
  walk(0, 0, shortcut(levels_[0]));
}

bool MaskBuilder::closes(const std::vector<Thread>& threads) const {
  if (!checked_) return true;
  for (const Thread& t : threads) {
    if (closing_bytes(*g_, t) <= limit_) return true;
  }
  return false;
}

bool MaskBuilder::Shortcut::covers(uint8_t safe, uint8_t whole, uint8_t cls, int height) const {
  if ((safe & utf8) || (whole & utf8_whole)) return true;
  if (((safe & utf8_bounded) || (whole & whole_bounded)) && height <= bounded_room) return true;
  for (int k = 0; k < kRunClasses; ++k) {
    if (((cls >> k) & 1) && height <= runs[k]) return true;
  }
  return false;
}

MaskBuilder::Shortcut MaskBuilder::shortcut(const std::vector<Thread>& threads) {
  Shortcut s;
  for (const Thread& t : threads) {
    // Near the budget, a thread lends its shortcut only while the longest
    // run it would accept whole still leaves it able to finish in time.
    const uint32_t closing = checked_ ? closing_bytes(*g_, t) : 0;
    const int u = plain_string_state(*g_, t);
    if (u >= 0) {
      // Content adds at most a pending UTF-8 sequence to what is left, and
      // nothing when it ends on a character boundary.
      if (closing > limit_) continue;
      const bool any_end = closing + 3 <= limit_;
      const Frame& top = t.f[t.depth - 1];
      const uint32_t max_chars = g_->nodes[top.node].max_chars;
      if (max_chars == UINT32_MAX) {
        (any_end ? s.utf8 : s.utf8_whole) |= uint8_t(1u << u);
      } else {
        (any_end ? s.utf8_bounded : s.whole_bounded) |= uint8_t(1u << u);
        s.bounded_room = std::min<int>(s.bounded_room, static_cast<int>(max_chars - top.a));
      }
      continue;
    }
    StringFormat f;
    uint32_t state;
    if (!format_string_state(*g_, t, &f, &state)) continue;
    // A run is lent while what the format needs after any of its bytes
    // still fits, with what the frames below the string need.
    const uint32_t below = checked_ ? closing - format_min_remaining(f, state) : 0;
    for (int k = 0; k < kRunClasses; ++k) {
      uint32_t worst = 0;
      const int run = runs_.run_length(f, state, k, &worst);
      if (!checked_ || below + worst <= limit_) {
        s.runs[k] = std::max<uint8_t>(s.runs[k], static_cast<uint8_t>(run));
      }
    }
  }
  return s;
}

void MaskBuilder::walk(uint32_t node, int level, const Shortcut& here) {
  const std::vector<TokenTrie::Node>& nodes = trie_->nodes();
  if (!nodes[node].has_child) return;
  if (levels_[level].size() == 1) {
    // Inside a pattern string: its DFA walks the subtree directly.
    const Thread& t = levels_[level][0];
    const Frame& top = t.f[t.depth - 1];
    const Node& n = g_->nodes[top.node];
    if (n.kind == NodeKind::string && n.pattern && top.phase == kStrContent) {
      const Pattern& p = g_->patterns[n.pattern - 1];
      const uint32_t base = checked_ ? closing_bytes(*g_, t) - (p.dist[top.a] + 1) : 0;
      if (node == 0 && (p.survives[top.a] >> kWritableClass & 1) &&
          (!checked_ || base + p.max_dist + 1 <= limit_)) {
        // A byte outside the class ends the string's DFA, a quote the string.
        const std::vector<uint64_t>& w = trie_->writable();
        for (size_t i = 0; i < bits_->size(); ++i) (*bits_)[i] |= w[i];
        walk_pattern(node, level, p, top.a, base, Quotes::only, Thread(t));
        return;
      }
      if (node != 0 || checked_) {
        walk_pattern(node, level, p, top.a, base, Quotes::all, Thread(t));
        return;
      }
      // From the root without a budget check, the tokens without a quote
      // depend on the DFA state alone: computed once per state.
      const uint64_t key = uint64_t(n.pattern) << 32 | top.a;
      auto it = pattern_bits_.find(key);
      if (it == pattern_bits_.end()) {
        if (pattern_bits_.size() >= 64) pattern_bits_.clear();
        std::vector<uint64_t> own(bits_->size(), 0);
        std::vector<uint64_t>* out = bits_;
        bits_ = &own;
        walk_pattern(node, level, p, top.a, base, Quotes::skip, t);
        bits_ = out;
        it = pattern_bits_.emplace(key, std::move(own)).first;
      }
      for (size_t w = 0; w < bits_->size(); ++w) (*bits_)[w] |= it->second[w];
      walk_pattern(node, level, p, top.a, base, Quotes::only, Thread(t));
      return;
    }
  }
  for (uint32_t c = node + 1; c != 0; c = nodes[c].next_sibling) visit(c, level, here);
}

void MaskBuilder::visit(uint32_t c, int level, const Shortcut& here) {
  const TokenTrie::Node& child = trie_->nodes()[c];
  ++visited_;
  if (here.covers(child.safe_in, child.whole_in, child.cls_in, child.height + 1)) {
    set_bit_range(*bits_, child.own_begin, child.sub_end);
    return;
  }
  if (((child.safe_in & here.utf8_bounded) || (child.whole_in & here.whole_bounded)) &&
      fit_bounded(child, level, here)) {
    return;
  }
  std::vector<Thread>& next = levels_[level + 1];
  next.clear();
  for (const Thread& t : levels_[level]) feed(*g_, t, child.byte, next);
  if (next.empty()) return;
  if (next.size() > 1) dedupe(next);
  if (child.own_end > child.own_begin) {
    if (closes(next)) {
      set_bit_range(*bits_, child.own_begin, child.own_end);
    } else {
      budget_refused_ = true;
    }
  }
  if (!child.has_child) return;
  const Shortcut below = shortcut(next);
  if (below.covers(child.safe, child.whole, child.cls, child.height)) {
    set_bit_range(*bits_, child.own_end, child.sub_end);
  } else {
    walk(c, level + 1, below);
  }
}

// The matcher refuses a byte of plain content only where it starts a
// character with max_chars already counted (a pending UTF-8 sequence is
// counted when it completes), so a token is allowed when the characters it
// starts after any pending one fit in what is left. Near the budget, the
// thread is only lent (`here`) while content cannot leave it unable to close.
bool MaskBuilder::fit_bounded(const TokenTrie::Node& child, int level, const Shortcut& here) {
  if (levels_[level].size() != 1) return false;
  const Thread& t = levels_[level][0];
  const int u = plain_string_state(*g_, t);
  const uint8_t lent = (child.safe_in & here.utf8_bounded) | (child.whole_in & here.whole_bounded);
  if (u < 0 || !(lent >> u & 1)) return false;
  const Frame& top = t.f[t.depth - 1];
  const uint32_t max_chars = g_->nodes[top.node].max_chars;
  const uint32_t fit = max_chars - top.a - (u != 0 ? 1 : 0);
  // The characters the shared first `level` bytes start.
  const std::string& first = trie_->piece(trie_->token_at(child.own_begin));
  const uint32_t before =
      static_cast<uint32_t>(std::count_if(first.begin(), first.begin() + level, [](char c) {
        return (static_cast<uint8_t>(c) & 0xC0) != 0x80;
      }));
  std::vector<uint64_t>& bits = *bits_;
  for (uint32_t pos = child.own_begin; pos < child.sub_end; ++pos) {
    const uint32_t starts = trie_->starts(pos) - before;
    if (starts <= fit || starts == 0) bits[pos >> 6] |= 1ull << (pos & 63);
  }
  return true;
}

// `start` is the one thread inside a pattern string where this walk began;
// `state` is the DFA state after the bytes down to `node`, `base` what the
// frames below the string need to close. A closing quote leaves the string:
// that child goes the generic way from `start` put in that state.
void MaskBuilder::walk_pattern(uint32_t node, int level, const Pattern& p, uint32_t state,
                               uint32_t base, Quotes quotes, const Thread& start) {
  const std::vector<TokenTrie::Node>& nodes = trie_->nodes();
  if (!nodes[node].has_child) return;
  // Near the budget, a token whose DFA state is anywhere is still in time.
  const bool all_in_time = !checked_ || base + p.max_dist + 1 <= limit_;
  for (uint32_t c = node + 1; c != 0; c = nodes[c].next_sibling) {
    const TokenTrie::Node& child = nodes[c];
    if (quotes == Quotes::only && !child.quote) continue;
    if (child.byte == '"') {
      if (quotes == Quotes::skip) continue;
      levels_[level].resize(1);
      Thread& t = levels_[level][0];
      t.copy_from(start);
      t.f[t.depth - 1].a = state;
      visit(c, level, shortcut(levels_[level]));
      continue;
    }
    ++visited_;
    const int32_t to = p.next[size_t(state) * 256 + child.byte];
    if (to < 0) continue;
    const bool in_time = !checked_ || base + p.dist[to] + 1 <= limit_;
    if (child.own_end > child.own_begin && quotes != Quotes::only) {
      if (in_time) {
        set_bit_range(*bits_, child.own_begin, child.own_end);
      } else {
        budget_refused_ = true;
      }
    }
    if (!child.has_child) continue;
    if (quotes != Quotes::only && in_time) {
      // Every token below stays alive: in `to` (a loop on every writable
      // byte) or through states that take every byte of a class the
      // subtree keeps to, finishing in time wherever it stops.
      const bool stays = p.loops[to] && (child.cls >> kWritableClass & 1);
      const bool lives = (child.cls & p.survives[to]) && all_in_time;
      if (stays || lives) {
        set_bit_range(*bits_, child.own_end, child.sub_end);
        continue;
      }
    }
    if (checked_ && !child.quote && base + p.dist[to] + 1 > limit_ + child.height) {
      // A byte brings the DFA at most one step nearer to accepting, so no
      // token below finishes in time. Skipped unseen only once a refusal
      // for the budget is on record or these tokens are known alive.
      if (budget_refused_) continue;
      if (child.cls & p.survives[to]) {
        budget_refused_ = true;
        continue;
      }
    }
    walk_pattern(c, level + 1, p, static_cast<uint32_t>(to), base, quotes, start);
  }
}

}  // namespace rc::structured
