// The vocabulary as a byte trie, and the per-step walk that turns matcher
// threads into the set of tokens that may come next.
//
// Built once per vocabulary: each token's bytes are what the stream decoder
// prints for it (Tokenizer::token_to_piece: SPM "▁" as a space, byte-
// fallback <0xNN> as that byte, BPE entries mapped back through the byte
// table), so a token spanning several grammar symbols ('",' or '"}]') is
// checked byte by byte exactly as its text will read. Control tokens,
// unknown pieces and end-of-generation ids are not in the trie.
//
// The walk feeds each trie edge's byte to the threads of its parent node and
// drops the subtree at the first byte no thread takes. Its shortcuts accept
// a subtree whole without walking it (what keeps strings cheap):
// - inside a plain string, when its every byte is ordinary string content
//   (no quote, backslash or control byte, valid UTF-8 from the current
//   UTF-8 state; precomputed per node and state);
// - inside a formatted string, when its bytes all lie in one byte class
//   (format-runs.h: digits, hex, letters and digits...) that the format
//   state accepts as a run at least as long as the subtree is deep.
// Both are checked before a child's byte is fed (child and subtree whole)
// and after (the subtree below it). In a string with maxLength (one
// thread), a subtree of plain content too deep to accept whole is settled
// token by token from each token's count of characters, without walking
// it. A subtree is only ever accepted whole when some thread takes every
// byte of every token in it, so the mask is exactly the brute-force one
// (tests compare them).
//
// Inside a pattern string (one thread), the walk follows the pattern's DFA
// table instead of feeding the matcher, and accepts a subtree whole where
// the DFA state takes every string of a byte class the subtree keeps to
// (Pattern::survives). From the root, a state that takes every writable
// string allows exactly the writable tokens (a bitset built with the trie)
// and those with a quote are walked; otherwise, without a budget check,
// the tokens without a quote that a DFA state allows are computed once
// per state and reused.
//
// Near the budget (json-closing.h) a token is allowed only if some thread
// after it can close in the tokens left; the shortcuts then apply only to
// threads that stay within it: a plain string too close to take a pending
// UTF-8 sequence to subtrees whose tokens all end on a character boundary,
// a format's class run while what the format needs after any of its bytes
// fits, and the pattern walk skips subtrees from which no token reaches an
// accepting DFA state in time.
//
// Tokens are numbered in trie order (a subtree is a range), so the walk
// marks ranges in a bitset; apply() maps it back to token ids.
//
// Threading: a TokenTrie is immutable after build; a MaskBuilder is one
// thread's scratch.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "format-runs.h"
#include "json-matcher.h"

namespace rc::tok {
class Tokenizer;
}

namespace rc::structured {

class TokenTrie {
 public:
  // pieces[id]: the token's bytes; "" for tokens that are never allowed.
  explicit TokenTrie(std::vector<std::string> pieces);
  static std::shared_ptr<const TokenTrie> from_tokenizer(const tok::Tokenizer& tok);

  struct Node {
    uint32_t next_sibling = 0;  // 0: none
    uint32_t own_begin = 0;     // tokens ending exactly here: [own_begin, own_end)
    uint32_t own_end = 0;
    uint32_t sub_end = 0;    // the whole subtree: [own_begin, sub_end)
    uint8_t byte = 0;        // the edge from the parent
    uint8_t safe = 0;        // bit u: every byte below is plain string content from UTF-8 state u
    uint8_t safe_in = 0;     // the same for this node's byte and every byte below
    uint8_t whole = 0;       // bit u: safe, and every token below ends on a character boundary
    uint8_t whole_in = 0;    // the same for this node's byte and every byte below
    uint8_t cls = 0;         // bit k: every byte below is in byte class k
    uint8_t cls_in = 0;      // the same for this node's byte and every byte below
    uint8_t height = 0;      // longest run of bytes below (255: 255 or more)
    bool has_child = false;  // the first child is the next node
    bool quote = false;      // this node's byte or one below is '"'
  };

  int n_vocab() const { return static_cast<int>(pieces_.size()); }
  const std::string& piece(int32_t id) const { return pieces_[id]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  size_t n_tokens() const { return order_.size(); }
  int max_depth() const { return max_depth_; }
  // Position of a token in trie order, -1 when it is not in the trie.
  int32_t position(int32_t id) const { return pos_of_[id]; }
  // The token at a trie position, and the ids that are in no position.
  int32_t token_at(uint32_t pos) const { return order_[pos]; }
  const std::vector<int32_t>& outside() const { return outside_; }
  // Whether every byte JSON output may need (printable ASCII and the bytes
  // of UTF-8 sequences) is a token of its own: what budget steering counts
  // on (json-closing.h).
  bool every_byte_a_token() const { return every_byte_; }
  // Bits over trie positions: the tokens whose every byte is in the
  // writable class (format-runs.h), the tokens without a '"' that a
  // pattern state taking every writable string allows.
  const std::vector<uint64_t>& writable() const { return writable_; }
  // The characters a token's bytes start (bytes that are not UTF-8
  // continuation bytes), by trie position: what maxLength counts.
  uint16_t starts(uint32_t pos) const { return starts_[pos]; }

 private:
  std::vector<std::string> pieces_;
  std::vector<Node> nodes_;
  std::vector<int32_t> order_;
  std::vector<int32_t> pos_of_;
  std::vector<int32_t> outside_;
  std::vector<uint64_t> writable_;
  std::vector<uint16_t> starts_;
  int max_depth_ = 0;
  bool every_byte_ = false;
};

class MaskBuilder {
 public:
  // Sets `bits` (over trie positions) to the tokens some thread accepts
  // and after which some thread can finish in at most `limit` bytes
  // (closing_bytes of json-closing.h; no check when the grammar's
  // closing_bound is within it).
  void compute(const Grammar& g, const TokenTrie& trie, const std::vector<Thread>& threads,
               std::vector<uint64_t>& bits, uint32_t limit = UINT32_MAX);
  uint64_t nodes_visited() const { return visited_; }
  // Whether the last compute() refused a token only for the budget.
  bool budget_refused() const { return budget_refused_; }

 private:
  // What lets a level's threads accept a subtree whole.
  struct Shortcut {
    uint8_t utf8 = 0;          // bit u: some thread is in a plain string, UTF-8 state u
    uint8_t utf8_bounded = 0;  // the same for strings with maxLength ...
    int bounded_room = 255;    // ... the fewest characters one of them may still take
    // Near the budget, a thread in a plain string that may not take a
    // pending UTF-8 sequence lends only subtrees whose tokens end on a
    // character boundary (they never add to what is left to write).
    uint8_t utf8_whole = 0;
    uint8_t whole_bounded = 0;
    uint8_t runs[kRunClasses] = {};  // longest run of class k some thread accepts
    bool covers(uint8_t safe, uint8_t whole, uint8_t cls, int height) const;
  };
  Shortcut shortcut(const std::vector<Thread>& threads);
  void walk(uint32_t node, int level, const Shortcut& here);
  void visit(uint32_t child, int level, const Shortcut& here);
  // One thread in a plain string with maxLength and a subtree of plain
  // content from its UTF-8 state: marks the subtree's tokens whose
  // characters fit in the room left, by count alone. False when it does
  // not apply.
  bool fit_bounded(const TokenTrie::Node& child, int level, const Shortcut& here);
  // Which of a pattern walk's tokens to mark: all, only those without a
  // '"' (what a DFA state alone decides: cached per state), or only those
  // with one (the rest came from the cache).
  enum class Quotes { all, skip, only };
  void walk_pattern(uint32_t node, int level, const Pattern& p, uint32_t state, uint32_t base,
                    Quotes quotes, const Thread& start);

  // Whether some thread can finish in limit_ bytes (when checked_).
  bool closes(const std::vector<Thread>& threads) const;

  const Grammar* g_ = nullptr;
  uint32_t limit_ = UINT32_MAX;
  bool checked_ = false;
  bool budget_refused_ = false;
  const TokenTrie* trie_ = nullptr;
  std::vector<uint64_t>* bits_ = nullptr;
  std::vector<std::vector<Thread>> levels_;
  uint64_t visited_ = 0;
  FormatRuns runs_;
  // Tokens without '"' allowed from the trie's root in a pattern state, by
  // (pattern, state); cleared when full.
  std::unordered_map<uint64_t, std::vector<uint64_t>> pattern_bits_;
};

// Sets bits [begin, end).
void set_bit_range(std::vector<uint64_t>& bits, uint32_t begin, uint32_t end);
inline bool test_bit(const std::vector<uint64_t>& bits, uint32_t i) {
  return (bits[i >> 6] >> (i & 63)) & 1;
}

}  // namespace rc::structured
