#include "json-pattern.h"

#include <algorithm>
#include <bitset>
#include <deque>
#include <map>
#include <memory>

#include "format-runs.h"
#include "schema-combine.h"

namespace rc::structured {

namespace {

using Set = std::bitset<128>;

constexpr size_t kMaxNfaStates = 4000;
constexpr size_t kMaxDfaStates = 2000;
constexpr int kMaxRepeat = 1000;

// What may be generated: printable ASCII but '"' and '\'.
Set writable() {
  Set s;
  for (int c = 0x20; c < 0x7f; ++c) {
    if (c != '"' && c != '\\') s.set(c);
  }
  return s;
}

struct Ast {
  enum Kind { chars, cat, alt, repeat } kind = cat;
  Set set;
  std::vector<std::unique_ptr<Ast>> kids;
  int min = 0, max = 0;  // repeat; max -1: unbounded
};
using AstPtr = std::unique_ptr<Ast>;

class Parser {
 public:
  Parser(const std::string& re, const std::string& where) : re_(re), where_(where) {}

  AstPtr parse_top(bool* anchored_start, bool* anchored_end) {
    *anchored_start = !re_.empty() && re_[0] == '^';
    if (*anchored_start) ++i_;
    end_ = re_.size();
    *anchored_end = false;
    if (end_ > i_ && re_[end_ - 1] == '$' && !escaped_at(end_ - 1)) {
      *anchored_end = true;
      --end_;
    }
    AstPtr a = parse_alt();
    if (i_ != end_) refuse("an unmatched ')'");
    return a;
  }

 private:
  [[noreturn]] void refuse(const std::string& what) {
    fail(where_, "'pattern' " + what + " is not supported (pattern: " + re_ + ")");
  }

  bool escaped_at(size_t pos) const {
    size_t n = 0;
    while (pos > n && re_[pos - n - 1] == '\\') ++n;
    return n % 2 == 1;
  }

  bool more() const { return i_ < end_; }
  char peek() const { return re_[i_]; }

  AstPtr parse_alt() {
    auto node = std::make_unique<Ast>();
    node->kind = Ast::alt;
    node->kids.push_back(parse_seq());
    while (more() && peek() == '|') {
      ++i_;
      node->kids.push_back(parse_seq());
    }
    if (node->kids.size() == 1) return std::move(node->kids[0]);
    return node;
  }

  AstPtr parse_seq() {
    auto node = std::make_unique<Ast>();
    node->kind = Ast::cat;
    while (more() && peek() != '|' && peek() != ')') {
      AstPtr atom = parse_atom();
      node->kids.push_back(parse_quantifier(std::move(atom)));
    }
    return node;
  }

  AstPtr chars(const Set& s) {
    auto a = std::make_unique<Ast>();
    a->kind = Ast::chars;
    a->set = s;
    return a;
  }

  Set escape_set(char e) {
    Set s;
    auto range = [&](int lo, int hi) {
      for (int c = lo; c <= hi; ++c) s.set(c);
    };
    switch (e) {
      case 'd':
      case 'D':
        range('0', '9');
        break;
      case 'w':
      case 'W':
        range('0', '9');
        range('a', 'z');
        range('A', 'Z');
        s.set('_');
        break;
      case 's':
      case 'S':
        s.set(' ');  // tab, newline... would need JSON escapes: never written
        break;
      case 'n':
      case 't':
      case 'r':
      case 'f':
      case 'v':
        return s;  // never written
      case 'b':
      case 'B':
        refuse("a word boundary (\\b)");
      case 'p':
      case 'P':
        refuse("a Unicode property class (\\p)");
      case 'u':
      case 'x':
      case 'c':
        refuse(std::string("the escape \\") + e);
      default:
        if (e >= '0' && e <= '9') refuse("a backreference");
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
          refuse(std::string("the escape \\") + e);
        }
        s.set(static_cast<unsigned char>(e));
        return s;
    }
    if (e >= 'A' && e <= 'Z') s = ~s & writable();
    return s;
  }

  char next_char() {
    if (!more()) refuse("that ends early");
    const char c = re_[i_++];
    if (static_cast<unsigned char>(c) >= 0x80) refuse("with non-ASCII characters");
    return c;
  }

  AstPtr parse_atom() {
    const char c = next_char();
    switch (c) {
      case '.':
        return chars(writable());
      case '(': {
        if (more() && peek() == '?') {
          ++i_;
          const char k = next_char();
          if (k == ':') {
          } else if (k == '<' && more() && peek() != '=' && peek() != '!') {
            while (more() && peek() != '>') ++i_;  // a named group
            next_char();
          } else if (k == 'P' && more() && peek() == '<') {
            while (more() && peek() != '>') ++i_;
            next_char();
          } else {
            refuse("lookaround or a group flag (?" + std::string(1, k) + ")");
          }
        }
        AstPtr inner = parse_alt();
        if (!more() || peek() != ')') refuse("an unclosed '('");
        ++i_;
        return inner;
      }
      case '[':
        return parse_class();
      case '\\':
        return chars(escape_set(next_char()));
      case '^':
      case '$':
        refuse(std::string("an anchor '") + c + "' other than at the start or end");
      case '*':
      case '+':
      case '?':
      case '{':
        refuse(std::string("a quantifier '") + c + "' with nothing before it");
      default: {
        Set s;
        s.set(static_cast<unsigned char>(c));
        return chars(s);
      }
    }
  }

  AstPtr parse_class() {
    bool negate = false;
    if (more() && peek() == '^') {
      negate = true;
      ++i_;
    }
    Set s;
    bool first = true;
    while (true) {
      if (!more()) refuse("an unclosed '['");
      char c = next_char();
      if (c == ']' && !first) break;
      first = false;
      if (c == '\\') {
        const char e = next_char();
        if (e == 'd' || e == 'w' || e == 's' || e == 'D' || e == 'W' || e == 'S') {
          s |= escape_set(e);
          continue;
        }
        c = e == 'n' || e == 't' || e == 'r' ? 0 : e;
        if (c == 0) continue;
      } else if (c == '[' && more() && peek() == ':') {
        refuse("a POSIX class [: :]");
      }
      if (more() && peek() == '-' && i_ + 1 < end_ && re_[i_ + 1] != ']') {
        ++i_;
        char hi = next_char();
        if (hi == '\\') hi = next_char();
        if (hi < c) refuse("a class range out of order");
        for (int x = c; x <= hi; ++x) s.set(x);
      } else {
        s.set(static_cast<unsigned char>(c));
      }
    }
    if (negate) s = ~s;
    return chars(s & writable());
  }

  int number() {
    int n = 0;
    bool any = false;
    while (more() && peek() >= '0' && peek() <= '9') {
      n = std::min(n * 10 + (peek() - '0'), kMaxRepeat + 1);
      ++i_;
      any = true;
    }
    if (!any) refuse("a malformed {n,m}");
    return n;
  }

  AstPtr parse_quantifier(AstPtr atom) {
    while (more()) {
      int min, max;
      const char c = peek();
      if (c == '*') {
        min = 0, max = -1;
        ++i_;
      } else if (c == '+') {
        min = 1, max = -1;
        ++i_;
      } else if (c == '?') {
        min = 0, max = 1;
        ++i_;
      } else if (c == '{') {
        ++i_;
        min = max = number();
        if (more() && peek() == ',') {
          ++i_;
          max = more() && peek() == '}' ? -1 : number();
        }
        if (!more() || peek() != '}') refuse("a malformed {n,m}");
        ++i_;
        if (min > kMaxRepeat || max > kMaxRepeat) refuse("a repeat count above 1000");
        if (max >= 0 && max < min) refuse("a {n,m} with m < n");
      } else {
        break;
      }
      if (more() && peek() == '?') ++i_;  // lazy: the same strings
      if (more() && peek() == '+') refuse("a possessive quantifier");
      auto r = std::make_unique<Ast>();
      r->kind = Ast::repeat;
      r->min = min;
      r->max = max;
      r->kids.push_back(std::move(atom));
      atom = std::move(r);
    }
    return atom;
  }

  const std::string& re_;
  const std::string& where_;
  size_t i_ = 0, end_ = 0;
};

struct Nfa {
  struct State {
    std::vector<int> eps;
    Set on;
    int to = -1;  // on a byte of `on`
  };
  std::vector<State> states;
  const std::string* where = nullptr;

  int add() {
    if (states.size() >= kMaxNfaStates)
      fail(*where, "'pattern' is too large (repeats expand too far)");
    states.emplace_back();
    return static_cast<int>(states.size() - 1);
  }

  // Builds `a` between new states; returns {start, end}.
  std::pair<int, int> build(const Ast& a) {
    const int s = add(), e = add();
    switch (a.kind) {
      case Ast::chars:
        states[s].on = a.set;
        states[s].to = e;
        break;
      case Ast::cat: {
        int cur = s;
        for (const AstPtr& k : a.kids) {
          auto [ks, ke] = build(*k);
          states[cur].eps.push_back(ks);
          cur = ke;
        }
        states[cur].eps.push_back(e);
        break;
      }
      case Ast::alt:
        for (const AstPtr& k : a.kids) {
          auto [ks, ke] = build(*k);
          states[s].eps.push_back(ks);
          states[ke].eps.push_back(e);
        }
        break;
      case Ast::repeat: {
        int cur = s;
        for (int i = 0; i < a.min; ++i) {
          auto [ks, ke] = build(*a.kids[0]);
          states[cur].eps.push_back(ks);
          cur = ke;
        }
        if (a.max < 0) {
          auto [ks, ke] = build(*a.kids[0]);
          states[cur].eps.push_back(ks);
          states[ke].eps.push_back(ks);
          states[ke].eps.push_back(e);
        } else {
          for (int i = a.min; i < a.max; ++i) {
            auto [ks, ke] = build(*a.kids[0]);
            states[cur].eps.push_back(ks);
            states[cur].eps.push_back(e);
            cur = ke;
          }
        }
        states[cur].eps.push_back(e);
        break;
      }
    }
    return {s, e};
  }

  std::vector<int> closure(std::vector<int> set) const {
    std::vector<char> seen(states.size(), 0);
    std::vector<int> stack = set;
    set.clear();
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      if (seen[x]) continue;
      seen[x] = 1;
      set.push_back(x);
      for (int y : states[x].eps) stack.push_back(y);
    }
    std::sort(set.begin(), set.end());
    return set;
  }
};

}  // namespace

Pattern compile_pattern(const std::string& re, const std::string& where) {
  bool anchored_start = false, anchored_end = false;
  Parser parser(re, where);
  AstPtr ast = parser.parse_top(&anchored_start, &anchored_end);
  Nfa nfa;
  nfa.where = &where;
  auto [start, end] = nfa.build(*ast);
  // Unanchored ends match anywhere: any writable bytes around.
  auto any_loop = [&](int at) {
    nfa.states[at].on = writable();
    nfa.states[at].to = at;
  };
  int s0 = start, accept = end;
  if (!anchored_start) {
    s0 = nfa.add();
    any_loop(s0);
    nfa.states[s0].eps.push_back(start);
  }
  if (!anchored_end) {
    accept = nfa.add();
    any_loop(accept);
    nfa.states[end].eps.push_back(accept);
  }
  const Set alphabet = writable();
  std::map<std::vector<int>, int> ids;
  std::vector<std::vector<int>> sets;
  std::deque<int> todo;
  Pattern p;
  auto intern = [&](std::vector<int> set) {
    auto [it, fresh] = ids.emplace(std::move(set), static_cast<int>(sets.size()));
    if (fresh) {
      if (sets.size() >= kMaxDfaStates) fail(where, "'pattern' is too complex (too many states)");
      sets.push_back(it->first);
      todo.push_back(it->second);
      p.next.resize(sets.size() * 256, -1);
    }
    return it->second;
  };
  intern(nfa.closure({s0}));
  while (!todo.empty()) {
    const int d = todo.front();
    todo.pop_front();
    for (int c = 0; c < 128; ++c) {
      if (!alphabet[c]) continue;
      std::vector<int> to;
      for (int x : sets[d]) {
        if (nfa.states[x].to >= 0 && nfa.states[x].on[c]) to.push_back(nfa.states[x].to);
      }
      if (to.empty()) continue;
      const int id = intern(nfa.closure(std::move(to)));
      p.next[size_t(d) * 256 + c] = id;
    }
  }
  const size_t n = sets.size();
  // Fewest bytes to accept, backwards from the accepting states.
  constexpr uint32_t kFar = UINT32_MAX;
  p.dist.assign(n, kFar);
  std::vector<std::vector<int>> from(n);
  std::deque<int> queue;
  for (size_t d = 0; d < n; ++d) {
    if (std::binary_search(sets[d].begin(), sets[d].end(), accept)) {
      p.dist[d] = 0;
      queue.push_back(static_cast<int>(d));
    }
    for (int c = 0; c < 256; ++c) {
      const int to = p.next[d * 256 + c];
      if (to >= 0) from[to].push_back(static_cast<int>(d));
    }
  }
  while (!queue.empty()) {
    const int d = queue.front();
    queue.pop_front();
    for (int prev : from[d]) {
      if (p.dist[prev] == kFar) {
        p.dist[prev] = p.dist[d] + 1;
        queue.push_back(prev);
      }
    }
  }
  if (p.dist[0] == kFar) fail(where, "'pattern' matches no string of printable characters");
  for (int32_t& to : p.next) {
    if (to >= 0 && p.dist[to] == kFar) to = -1;  // leads nowhere
  }
  for (uint32_t d : p.dist) {
    if (d != kFar) p.max_dist = std::max(p.max_dist, d);
  }
  p.loops.assign(n, 1);
  for (size_t d = 0; d < n; ++d) {
    for (int c = 0; c < 128 && p.loops[d]; ++c) {
      if (alphabet[c] && p.next[d * 256 + c] != static_cast<int32_t>(d)) p.loops[d] = 0;
    }
  }
  // A state survives class k unless some class-k string leads from it to a
  // state that refuses a class-k byte: backwards from those states along
  // class-k edges.
  p.survives.assign(n, 0);
  for (int k = 0; k < kByteClasses; ++k) {
    std::vector<std::vector<int>> into(n);
    std::vector<uint8_t> dies(n, 0);
    std::deque<int> back;
    for (size_t d = 0; d < n; ++d) {
      for (int c = 0; c < 256; ++c) {
        if (!in_byte_class(k, static_cast<uint8_t>(c))) continue;
        const int to = p.next[d * 256 + c];
        if (to < 0) {
          dies[d] = 1;
        } else {
          into[to].push_back(static_cast<int>(d));
        }
      }
      if (dies[d]) back.push_back(static_cast<int>(d));
    }
    while (!back.empty()) {
      const int d = back.front();
      back.pop_front();
      for (int prev : into[d]) {
        if (!dies[prev]) {
          dies[prev] = 1;
          back.push_back(prev);
        }
      }
    }
    for (size_t d = 0; d < n; ++d) {
      if (!dies[d]) p.survives[d] |= uint8_t(1u << k);
    }
  }
  return p;
}

}  // namespace rc::structured
