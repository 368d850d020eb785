// The byte automaton of json-matcher.h: one step function per frame kind.
#include "json-matcher.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "int-range.h"
#include "json-closing.h"
#include "json-phases.h"

namespace rc::structured {

namespace {

// What a frame does with a byte.
enum class Act {
  reject,
  take,        // consumed; the frame stays
  take_close,  // consumed, and the frame is complete: pop it
  pop_retry,   // the frame is complete and the byte belongs to its parent
  push,        // push `child`, then feed it the byte
  replace,     // replace this frame by `child`, then feed it the byte
};

struct Outcome {
  Act act;
  uint32_t child = 0;
};

constexpr Outcome kReject{Act::reject};
constexpr Outcome kTake{Act::take};

// Whitespace inside a gap of a container, bounded per gap.
bool take_ws(Frame& f, uint8_t c) {
  if (kMaxWhitespaceRun == 0) return false;
  if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r') || f.ws >= kMaxWhitespaceRun) return false;
  ++f.ws;
  return true;
}

bool required_in(const Node& n, uint32_t from, uint32_t to) {
  for (uint32_t i = from; i < to && i < n.props.size(); ++i) {
    if (n.props[i].required) return true;
  }
  return false;
}

// Last property index a key may name when properties before `from` are
// settled: up to and including the first required one.
uint32_t key_limit(const Node& n, uint32_t from) {
  uint32_t j = from;
  while (j < n.props.size() && !n.props[j].required) ++j;
  return std::min<uint32_t>(j, static_cast<uint32_t>(n.props.size()) - 1);
}

// Whether a value of `node` can be finished by a frame with `room` frames.
bool fits(const Grammar& g, uint32_t node, int room) {
  return room > 0 && g.nodes[node].min_len[room] < kNever;
}

// The key of a declared-properties object: another allowed key with the
// same prefix when the current one does not continue with c.
Outcome step_key(const Grammar& g, const Node& n, Frame& f, uint8_t c, int room) {
  const std::string& cur = n.props[f.b].key_json;
  if (f.pos >= cur.size() || cur[f.pos] != static_cast<char>(c)) {
    const uint32_t limit = key_limit(n, f.a);
    uint32_t found = UINT32_MAX;
    for (uint32_t j = f.a; j <= limit; ++j) {
      const std::string& k = n.props[j].key_json;
      if (k.size() > f.pos && k[f.pos] == static_cast<char>(c) &&
          k.compare(0, f.pos, cur, 0, f.pos) == 0 && fits(g, n.props[j].value, room - 1)) {
        found = j;
        break;
      }
    }
    if (found == UINT32_MAX) return kReject;
    f.b = found;
  }
  if (++f.pos == n.props[f.b].key_json.size()) {
    f.phase = kColon;
    f.ws = 0;
  }
  return kTake;
}

// Objects: declared properties in order (`object`), or any keys (`map`,
// keys are plain strings pushed as frames, values of node `items`).
Outcome step_object(const Grammar& g, const Node& n, Frame& f, uint8_t c, int room) {
  const bool map = n.kind == NodeKind::map;
  const uint32_t np = static_cast<uint32_t>(n.props.size());
  // May the object close / take another member now?
  const bool can_close = map || !required_in(n, f.a, np);
  auto more = [&] {
    return map ? fits(g, n.items, room - 1) && fits(g, g.plain_string, room - 1)
               : cheapest_member(g, n, f.a, room - 1) != UINT32_MAX;
  };
  if (f.phase == kOpen) {
    if (c != '{') return kReject;
    f.phase = kFirst;
    return kTake;
  }
  if (f.phase == kKey) return step_key(g, n, f, c, room);
  if (take_ws(f, c)) return kTake;
  switch (f.phase) {
    case kFirst:
    case kComma:
      if (c == '}' && f.phase == kFirst && can_close) return {Act::take_close};
      if (c != '"' || !more()) return kReject;
      f.ws = 0;
      if (map) {
        f.phase = kColon;
        return {Act::push, g.plain_string};
      }
      f.phase = kKey;
      f.pos = 1;
      f.b = cheapest_member(g, n, f.a, room - 1);  // where closing_bytes() expects it
      return kTake;
    case kColon:
      if (c != ':') return kReject;
      f.phase = kValue;
      f.ws = 0;
      return kTake;
    case kValue:
      f.phase = kAfter;
      f.ws = 0;
      if (map) return {Act::push, n.items};
      f.a = f.b + 1;
      return {Act::push, n.props[f.b].value};
    case kAfter:
      if (c == ',' && more()) {
        f.phase = kComma;
        f.ws = 0;
        return kTake;
      }
      if (c == '}' && can_close) return {Act::take_close};
      return kReject;
  }
  return kReject;
}

Outcome step_array(const Grammar& g, const Node& n, Frame& f, uint8_t c, int room) {
  const bool unused_left = n.unique_of == UINT32_MAX || static_cast<size_t>(std::popcount(f.b)) <
                                                            g.nodes[n.unique_of].literals.size();
  const bool more = f.a < n.max_items && unused_left && fits(g, n.item_node(f.a), room - 1);
  switch (f.phase) {
    case kOpen:
      if (c != '[') return kReject;
      f.phase = kFirst;
      return kTake;
    case kFirst:
    case kComma:
      if (take_ws(f, c)) return kTake;
      if (c == ']' && f.phase == kFirst && n.min_items == 0) return {Act::take_close};
      if (!more) return kReject;
      f.phase = kAfter;
      f.ws = 0;
      return {Act::push, n.item_node(f.a++)};
    case kAfter:
      if (take_ws(f, c)) return kTake;
      if (c == ',' && more) {
        f.phase = kComma;
        f.ws = 0;
        return kTake;
      }
      if (c == ']' && f.a >= n.min_items) return {Act::take_close};
      return kReject;
  }
  return kReject;
}

bool is_hex(uint8_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Plain strings count characters in `a` (an escape or a UTF-8 sequence is
// one), for minLength / maxLength.
Outcome step_string(const Grammar& g, const Node& n, Frame& f, uint8_t c) {
  switch (f.phase) {
    case kStrOpen:
      if (c != '"') return kReject;
      f.phase = kStrContent;
      return kTake;
    case kStrContent:
      if (n.pattern) {  // a DFA state in `a`
        const Pattern& p = g.patterns[n.pattern - 1];
        if (c == '"') return p.dist[f.a] == 0 ? Outcome{Act::take_close} : kReject;
        const int32_t next = p.next[size_t(f.a) * 256 + c];
        if (next < 0) return kReject;
        f.a = static_cast<uint32_t>(next);
        return kTake;
      }
      if (n.format != StringFormat::none) {
        if (c == '"') return format_complete(n.format, f.a) ? Outcome{Act::take_close} : kReject;
        const int64_t next = format_next(n.format, f.a, c);
        if (next < 0) return kReject;
        f.a = static_cast<uint32_t>(next);
        return kTake;
      }
      if (f.b == 0) {
        if (c == '"') return f.a >= n.min_chars ? Outcome{Act::take_close} : kReject;
        if (f.a >= n.max_chars) return kReject;
        if (c == '\\') {
          f.phase = kStrEscape;
          return kTake;
        }
        if (c < 0x20) return kReject;
      }
      {
        const int next = utf8_next(static_cast<int>(f.b), c);
        if (next < 0) return kReject;
        f.b = static_cast<uint32_t>(next);
        if (next == 0) ++f.a;
      }
      return kTake;
    case kStrEscape:
      if (c == 'u') {
        f.phase = kStrHex;
        f.pos = 0;
        return kTake;
      }
      if (!std::strchr("\"\\/bfnrt", c) || c == 0) return kReject;
      f.phase = kStrContent;
      ++f.a;
      return kTake;
    case kStrHex: {
      if (!is_hex(c)) return kReject;
      const int digit = f.pos & 0xff;
      // No surrogate escapes (\uD800-\uDFFF): a lone one is not valid text.
      if (digit == 0 && (c == 'd' || c == 'D')) f.pos |= 0x100;
      if (digit == 1 && (f.pos & 0x100) && c > '7') return kReject;
      f.pos = static_cast<uint16_t>((f.pos & 0x100) | (digit + 1));
      if (digit + 1 == 4) {
        f.phase = kStrContent;
        f.pos = 0;
        ++f.a;
      }
      return kTake;
    }
  }
  return kReject;
}

uint64_t magnitude(const Frame& f) { return uint64_t(f.b) << 32 | f.a; }

// Whether a bounded non-integer number may take a fraction after its
// integer part: every value between it and the next integer away from zero
// is allowed.
bool fraction_allowed(const Node& n, const Frame& f) {
  if (!n.range.bounded) return true;
  const bool neg = f.pos & kNumNegative;
  const uint64_t m = magnitude(f);
  if (neg && m == 0) return int_allowed(n.range, false, 0) && int_allowed(n.range, true, 1);
  return int_allowed(n.range, neg, m) && int_allowed(n.range, neg, m + 1);
}

bool number_done(const Node& n, const Frame& f) {
  if (f.phase == kNumInt || f.phase == kNumZero) {
    return !(n.range.bounded || n.range.step) ||
           int_allowed(n.range, f.pos & kNumNegative, magnitude(f));
  }
  return f.phase == kNumFrac || f.phase == kNumExpDigits;
}

Outcome step_number(const Node& n, Frame& f, uint8_t c) {
  const bool digit = c >= '0' && c <= '9';
  const bool ranged = n.range.bounded || n.range.step;
  const uint16_t sign = f.pos & kNumNegative;
  auto to = [&](uint8_t phase, uint16_t pos) {
    f.phase = phase;
    f.pos = static_cast<uint16_t>(pos | sign);
    return kTake;
  };
  // An integer-part digit: kept only while some completion is allowed.
  auto int_digit = [&](uint8_t phase) {
    const int digits = f.pos & 0xff;
    const uint64_t m = magnitude(f) * 10 + (c - '0');
    if (ranged && int_digits_needed(n.range, sign, m, digits + 1) < 0) {
      // "-0" may still become "-0.5" when that is in range.
      Frame probe = f;
      probe.a = probe.b = 0;
      const bool negative_fraction =
          !n.integer && sign && m == 0 && digits == 0 && fraction_allowed(n, probe);
      if (!negative_fraction) return kReject;
    }
    f.a = static_cast<uint32_t>(m);
    f.b = static_cast<uint32_t>(m >> 32);
    return to(phase, static_cast<uint16_t>(digits + 1));
  };
  switch (f.phase) {
    case kNumStart:
      if (c == '-') {
        f.pos = kNumNegative;
        if (ranged && int_digits_needed(n.range, true, 0, 0) < 0) return kReject;
        f.phase = kNumMinus;
        return kTake;
      }
      [[fallthrough]];
    case kNumMinus:
      if (c == '0') return int_digit(kNumZero);
      if (digit) return int_digit(kNumInt);
      return kReject;
    case kNumInt:
      if (digit && (f.pos & 0xff) < kMaxIntDigits) return int_digit(kNumInt);
      break;
    case kNumDot:
      return digit ? to(kNumFrac, 1) : kReject;
    case kNumFrac:
      if (digit && (f.pos & 0xff) < kMaxFracDigits) return to(kNumFrac, (f.pos & 0xff) + 1);
      break;
    case kNumExp:
      if (c == '+' || c == '-') return to(kNumExpSign, 0);
      [[fallthrough]];
    case kNumExpSign:
      return digit ? to(kNumExpDigits, 1) : kReject;
    case kNumExpDigits:
      if (digit && (f.pos & 0xff) < kMaxExpDigits) return to(kNumExpDigits, (f.pos & 0xff) + 1);
      break;
  }
  if (!n.integer && (f.phase == kNumInt || f.phase == kNumZero)) {
    if (c == '.' && fraction_allowed(n, f)) return to(kNumDot, 0);
    if ((c == 'e' || c == 'E') && !ranged) return to(kNumExp, 0);
  }
  if (!n.integer && !ranged && (c == 'e' || c == 'E') && f.phase == kNumFrac) {
    return to(kNumExp, 0);
  }
  if (digit) return kReject;  // too many digits
  return number_done(n, f) ? Outcome{Act::pop_retry} : kReject;
}

// `a` is the smallest literal with the prefix matched so far (literals are
// sorted), so "a literal ends here" is lits[a].size() == pos.
// `exclude`: values already used by a uniqueItems array (bit per index).
Outcome step_literals(const Node& n, Frame& f, uint8_t c, uint32_t exclude) {
  const std::vector<std::string>& lits = n.literals;
  const std::string& cur = lits[f.a];
  auto used = [&](uint32_t k) { return k < 32 && ((exclude >> k) & 1); };
  for (uint32_t k = f.a; k < lits.size(); ++k) {
    const std::string& s = lits[k];
    if (k != f.a && s.compare(0, f.pos, cur, 0, f.pos) != 0) break;
    if (used(k)) continue;
    if (s.size() > f.pos && static_cast<uint8_t>(s[f.pos]) == c) {
      f.a = k;
      ++f.pos;
      const bool exact = s.size() == f.pos;
      bool longer = false;
      for (uint32_t j = k + 1; j < lits.size() && !longer; ++j) {
        if (lits[j].compare(0, f.pos, s) != 0) break;
        longer = !used(j);
      }
      return exact && !longer ? Outcome{Act::take_close} : kTake;
    }
  }
  return cur.size() == f.pos && f.pos > 0 ? Outcome{Act::pop_retry} : kReject;
}

Outcome step_any_value(const Grammar& g, uint8_t c) {
  if (c == '{') return {Act::replace, g.any_map};
  if (c == '[') return {Act::replace, g.any_array};
  if (c == '"') return {Act::replace, g.plain_string};
  if (c == '-' || (c >= '0' && c <= '9')) return {Act::replace, g.any_number};
  if (c == 't' || c == 'f' || c == 'n') return {Act::replace, g.any_literal};
  return kReject;
}

// `room`: the frames this one and its descendants may use.
Outcome step_frame(const Grammar& g, Frame& f, uint8_t c, int room, uint32_t exclude) {
  const Node& n = g.nodes[f.node];
  switch (n.kind) {
    case NodeKind::document:
      if (f.phase == 1) return kReject;  // the document is complete
      if (take_ws(f, c)) return kTake;
      f.phase = 1;
      return {Act::push, n.items};
    case NodeKind::any_value:
      return step_any_value(g, c);
    case NodeKind::object:
    case NodeKind::map:
      return step_object(g, n, f, c, room);
    case NodeKind::array:
      return step_array(g, n, f, c, room);
    case NodeKind::string:
      return step_string(g, n, f, c);
    case NodeKind::number:
      return step_number(n, f, c);
    case NodeKind::literals:
      return step_literals(n, f, c, exclude);
    case NodeKind::any_of:
      return kReject;  // never a frame
  }
  return kReject;
}

void feed_thread(const Grammar& g, Thread& t, uint8_t c, std::vector<Thread>& out);

// Pushes `node` (forking on any_of) and feeds it `c`. Alternatives that could
// not finish within kMaxFrames are not taken. `forks` bounds any_of chains
// that lead back to themselves without a frame.
void push_node(const Grammar& g, const Thread& t, uint32_t node, uint8_t c,
               std::vector<Thread>& out, int forks) {
  const Node& n = g.nodes[node];
  if (!fits(g, node, kMaxFrames - static_cast<int>(t.depth))) return;
  if (n.kind == NodeKind::any_of) {
    if (forks > 16) return;
    for (uint32_t alt : n.alts) push_node(g, t, alt, c, out, forks + 1);
    return;
  }
  Thread next;
  next.copy_from(t);
  next.f[next.depth] = Frame{};
  next.f[next.depth].node = node;
  ++next.depth;
  feed_thread(g, next, c, out);
}

// The uniqueItems array right below a literal frame at `top`, or null.
Frame* unique_parent(const Grammar& g, Thread& t) {
  if (t.depth < 2 || g.nodes[t.f[t.depth - 1].node].kind != NodeKind::literals) return nullptr;
  Frame& parent = t.f[t.depth - 2];
  return g.nodes[parent.node].unique_of != UINT32_MAX ? &parent : nullptr;
}

// Pops the top frame; a literal closing inside a uniqueItems array marks
// its value used.
void pop(const Grammar& g, Thread& t) {
  if (Frame* parent = unique_parent(g, t); parent && t.f[t.depth - 1].a < 32) {
    parent->b |= 1u << t.f[t.depth - 1].a;
  }
  --t.depth;
}

void feed_thread(const Grammar& g, Thread& t, uint8_t c, std::vector<Thread>& out) {
  while (t.depth > 0) {
    Frame& top = t.f[t.depth - 1];
    const Frame* parent = unique_parent(g, t);
    const Outcome o =
        step_frame(g, top, c, kMaxFrames - static_cast<int>(t.depth) + 1, parent ? parent->b : 0);
    switch (o.act) {
      case Act::reject:
        return;
      case Act::take:
        out.push_back(t);
        return;
      case Act::take_close:
        pop(g, t);
        out.push_back(t);
        return;
      case Act::pop_retry:
        pop(g, t);
        continue;
      case Act::push:
        push_node(g, t, o.child, c, out, 0);
        return;
      case Act::replace:
        --t.depth;
        push_node(g, t, o.child, c, out, 0);
        return;
    }
  }
}

bool scalar_can_end(const Grammar& g, const Frame& f) {
  const Node& n = g.nodes[f.node];
  if (n.kind == NodeKind::number) return number_done(n, f);
  if (n.kind == NodeKind::literals) return f.pos > 0 && n.literals[f.a].size() == f.pos;
  return false;
}

}  // namespace

bool Thread::same_as(const Thread& o) const {
  return depth == o.depth && std::memcmp(f, o.f, depth * sizeof(Frame)) == 0;
}

void Thread::copy_from(const Thread& o) {
  depth = o.depth;
  std::memcpy(f, o.f, depth * sizeof(Frame));
}

Thread start_thread(const Grammar& g) {
  Thread t;
  t.f[0] = Frame{};
  t.f[0].node = g.document;
  t.depth = 1;
  return t;
}

void feed(const Grammar& g, const Thread& t, uint8_t byte, std::vector<Thread>& out) {
  Thread copy;
  copy.copy_from(t);
  feed_thread(g, copy, byte, out);
}

bool accepting(const Grammar& g, const Thread& t) {
  if (t.depth == 0 || t.f[0].phase != 1) return false;
  if (t.depth == 1) return true;
  return t.depth == 2 && scalar_can_end(g, t.f[1]);
}

bool finished(const Grammar&, const Thread& t) { return t.depth == 1 && t.f[0].phase == 1; }

int plain_string_state(const Grammar& g, const Thread& t) {
  if (t.depth == 0) return -1;
  const Frame& f = t.f[t.depth - 1];
  const Node& n = g.nodes[f.node];
  if (n.kind != NodeKind::string || n.format != StringFormat::none || n.pattern ||
      f.phase != kStrContent) {
    return -1;
  }
  return static_cast<int>(f.b);
}

bool format_string_state(const Grammar& g, const Thread& t, StringFormat* f, uint32_t* state) {
  if (t.depth == 0) return false;
  const Frame& top = t.f[t.depth - 1];
  const Node& n = g.nodes[top.node];
  if (n.kind != NodeKind::string || n.format == StringFormat::none || top.phase != kStrContent) {
    return false;
  }
  *f = n.format;
  *state = top.a;
  return true;
}

int utf8_next(int state, uint8_t c) {
  // States: 0 between characters; 1-3 need that many continuation bytes;
  // 4 after E0 (next A0-BF), 5 after ED (80-9F, no surrogates), 6 after F0
  // (90-BF), 7 after F4 (80-8F, nothing above U+10FFFF).
  const bool cont = c >= 0x80 && c <= 0xBF;
  switch (state) {
    case 0:
      if (c < 0x80) return 0;
      if (c >= 0xC2 && c <= 0xDF) return 1;
      if (c == 0xE0) return 4;
      if (c == 0xED) return 5;
      if (c >= 0xE1 && c <= 0xEF) return 2;
      if (c == 0xF0) return 6;
      if (c >= 0xF1 && c <= 0xF3) return 3;
      if (c == 0xF4) return 7;
      return -1;
    case 1:
      return cont ? 0 : -1;
    case 2:
      return cont ? 1 : -1;
    case 3:
      return cont ? 2 : -1;
    case 4:
      return c >= 0xA0 && c <= 0xBF ? 1 : -1;
    case 5:
      return c >= 0x80 && c <= 0x9F ? 1 : -1;
    case 6:
      return c >= 0x90 && c <= 0xBF ? 2 : -1;
    case 7:
      return c >= 0x80 && c <= 0x8F ? 2 : -1;
  }
  return -1;
}

void dedupe(std::vector<Thread>& threads) {
  size_t kept = 0;
  for (size_t i = 0; i < threads.size(); ++i) {
    bool seen = false;
    for (size_t j = 0; j < kept && !seen; ++j) seen = threads[j].same_as(threads[i]);
    if (!seen) {
      if (kept != i) threads[kept].copy_from(threads[i]);
      ++kept;
    }
  }
  threads.resize(kept);
}

}  // namespace rc::structured
