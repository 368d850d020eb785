#include "json-closing.h"

#include <algorithm>

#include "int-range.h"
#include "json-phases.h"

namespace rc::structured {

namespace {

uint32_t len(const Grammar& g, uint32_t node, int room) {
  if (room <= 0) return kNever;
  return g.nodes[node].min_len[std::min(room, kMaxFrames)];
}

uint32_t add(uint64_t a, uint64_t b) {
  return static_cast<uint32_t>(std::min<uint64_t>(a + b, kNever));
}

uint32_t member_cost(const Grammar& g, const Property& p, int room) {
  return add(p.key_json.size() + 1, len(g, p.value, room));
}

// From after a member (properties before `from` settled): a comma and a
// member for each required one left, then '}'. `room`: the values' room.
uint32_t object_tail(const Grammar& g, const Node& n, uint32_t from, int room) {
  if (!n.tails.empty() && room >= 0) return n.tails[room * (n.props.size() + 1) + from];
  uint64_t total = 1;
  for (uint32_t j = from; j < n.props.size(); ++j) {
    if (n.props[j].required) total = add(total, 1 + uint64_t(member_cost(g, n.props[j], room)));
  }
  return static_cast<uint32_t>(std::min<uint64_t>(total, kNever));
}

// Items a..min_items-1 after a comma each, then ']'.
uint32_t array_tail(const Grammar& g, const Node& n, uint32_t from, int room) {
  uint64_t total = 1;
  const uint32_t explicit_end = std::min<uint32_t>(n.min_items, n.prefix.size());
  for (uint32_t i = from; i < explicit_end; ++i) {
    total += 1 + uint64_t(len(g, n.prefix[i], room));
  }
  const uint32_t start = std::max<uint32_t>(from, explicit_end);
  if (n.min_items > start)
    total += uint64_t(n.min_items - start) * (1 + uint64_t(len(g, n.items, room)));
  return static_cast<uint32_t>(std::min<uint64_t>(total, kNever));
}

uint32_t utf8_pending(uint32_t state) {
  static const uint8_t kBytes[kUtf8States] = {0, 1, 2, 3, 2, 2, 3, 3};
  return state < kUtf8States ? kBytes[state] : 0;
}

uint32_t chars_left(const Node& n, uint32_t have) {
  return have >= n.min_chars ? 0 : n.min_chars - have;
}

uint32_t string_rest(const Grammar& g, const Node& n, const Frame& f) {
  if (n.pattern) {
    const Pattern& p = g.patterns[n.pattern - 1];
    return f.phase == kStrOpen ? 2 + p.dist[0] : p.dist[f.a] + 1;
  }
  if (n.format != StringFormat::none) {
    return f.phase == kStrOpen ? 2 + format_min_remaining(n.format, 0)
                               : format_min_remaining(n.format, f.a) + 1;
  }
  switch (f.phase) {
    case kStrOpen:
      return 2 + n.min_chars;
    case kStrContent: {
      const uint32_t pending = utf8_pending(f.b);
      return pending + chars_left(n, f.a + (pending ? 1 : 0)) + 1;
    }
    case kStrEscape:
      return 1 + chars_left(n, f.a + 1) + 1;
    case kStrHex:
      return (4 - (f.pos & 0xff)) + chars_left(n, f.a + 1) + 1;
  }
  return kNever;
}

uint32_t number_rest(const Node& n, const Frame& f) {
  const bool ranged = n.range.bounded || n.range.step;
  const bool neg = f.pos & kNumNegative;
  const uint64_t m = uint64_t(f.b) << 32 | f.a;
  switch (f.phase) {
    case kNumStart: {
      const int b = ranged ? int_min_bytes(n.range) : 1;
      return b < 0 ? kNever : uint32_t(b);
    }
    case kNumMinus: {
      const int d = ranged ? int_digits_needed(n.range, true, 0, 0) : 1;
      return d < 0 ? kNever : uint32_t(d);
    }
    case kNumInt:
    case kNumZero: {
      const int d = ranged ? int_digits_needed(n.range, neg, m, f.pos & 0xff) : 0;
      if (d < 0 && neg && m == 0) return 2;  // "-0" the matcher let through: ".5"
      return d < 0 ? kNever : uint32_t(d);
    }
    case kNumDot:
    case kNumExp:
    case kNumExpSign:
      return 1;
    default:
      return 0;
  }
}

// The shortest literal (lowest index among equals) the frame may still
// become, values in `used` aside; UINT32_MAX when none.
uint32_t literal_choice(const Node& n, const Frame& f, uint32_t used) {
  const std::vector<std::string>& lits = n.literals;
  uint32_t best = UINT32_MAX;
  for (uint32_t k = f.a; k < lits.size(); ++k) {
    if (k != f.a && lits[k].compare(0, f.pos, lits[f.a], 0, f.pos) != 0) break;
    if (k < 32 && ((used >> k) & 1)) continue;
    if (best == UINT32_MAX || lits[k].size() < lits[best].size()) best = k;
  }
  return best;
}

uint32_t literal_rest(const Node& n, const Frame& f, uint32_t used = 0) {
  const uint32_t k = literal_choice(n, f, used);
  return k == UINT32_MAX ? kNever : static_cast<uint32_t>(n.literals[k].size()) - f.pos;
}

// The k shortest values of a uniqueItems array's literals not in `used`,
// each after a comma but the first when `first`; then ']'.
uint32_t unique_tail(const Grammar& g, const Node& n, uint32_t used, uint32_t k, bool first) {
  std::vector<uint32_t> sizes;
  const std::vector<std::string>& lits = g.nodes[n.unique_of].literals;
  for (uint32_t i = 0; i < lits.size(); ++i) {
    if (!(i < 32 && ((used >> i) & 1))) sizes.push_back(static_cast<uint32_t>(lits[i].size()));
  }
  if (sizes.size() < k) return kNever;
  std::sort(sizes.begin(), sizes.end());
  uint64_t total = 1 + k - (first && k > 0 ? 1 : 0);
  for (uint32_t i = 0; i < k; ++i) total += sizes[i];
  return static_cast<uint32_t>(std::min<uint64_t>(total, kNever));
}

uint32_t unique_array_rest(const Grammar& g, const Node& n, const Frame& f) {
  const uint32_t left = n.min_items > f.a ? n.min_items - f.a : 0;
  switch (f.phase) {
    case kOpen:
      return add(1, unique_tail(g, n, f.b, n.min_items, true));
    case kFirst:
      return unique_tail(g, n, f.b, n.min_items, true);
    case kAfter:
      return unique_tail(g, n, f.b, left, false);
    case kComma:
      return unique_tail(g, n, f.b, std::max<uint32_t>(left, 1), true);
  }
  return kNever;
}

// What frame `f` (with `room` frames) still needs once the frame above it,
// if any, is complete.
uint32_t frame_rest(const Grammar& g, const Frame& f, int room) {
  const Node& n = g.nodes[f.node];
  const int cr = room - 1;
  switch (n.kind) {
    case NodeKind::document:
      return f.phase == 1 ? 0 : len(g, n.items, cr);
    case NodeKind::map:
      switch (f.phase) {
        case kOpen:
          return 2;
        case kFirst:
        case kAfter:
          return 1;
        case kColon:
          return add(2, len(g, n.items, cr));
        case kValue:
          return add(1, len(g, n.items, cr));
        case kComma:
          return add(4, len(g, n.items, cr));
      }
      return kNever;
    case NodeKind::object: {
      switch (f.phase) {
        case kOpen:
          return add(1, object_tail(g, n, 0, cr));
        case kFirst: {
          const bool any_required = std::any_of(n.props.begin(), n.props.end(),
                                                [](const Property& p) { return p.required; });
          const uint32_t tail = object_tail(g, n, 0, cr);
          return !any_required ? 1 : tail >= kNever ? kNever : tail - 1;
        }
        case kKey: {
          const Property& p = n.props[f.b];
          return add(p.key_json.size() - f.pos + 1,
                     add(len(g, p.value, cr), object_tail(g, n, f.b + 1, cr)));
        }
        case kColon:
        case kValue: {
          const Property& p = n.props[f.b];
          return add(f.phase == kColon ? 1 : 0,
                     add(len(g, p.value, cr), object_tail(g, n, f.b + 1, cr)));
        }
        case kAfter:
          return object_tail(g, n, f.a, cr);
        case kComma: {
          const uint32_t j = cheapest_member(g, n, f.a, cr);
          if (j == UINT32_MAX) return kNever;
          return add(member_cost(g, n.props[j], cr), object_tail(g, n, j + 1, cr));
        }
      }
      return kNever;
    }
    case NodeKind::array:
      if (n.unique_of != UINT32_MAX) return unique_array_rest(g, n, f);
      switch (f.phase) {
        case kOpen:
          return n.min_items == 0 ? 2 : add(1, array_tail(g, n, 0, cr));
        case kFirst: {
          if (n.min_items == 0) return 1;
          const uint32_t tail = array_tail(g, n, 0, cr);
          return tail >= kNever ? kNever : tail - 1;
        }
        case kAfter:
          return array_tail(g, n, f.a, cr);
        case kComma:
          return add(len(g, n.item_node(f.a), cr), array_tail(g, n, f.a + 1, cr));
      }
      return kNever;
    case NodeKind::string:
      return string_rest(g, n, f);
    case NodeKind::number:
      return number_rest(n, f);
    case NodeKind::literals:
      return f.pos == 0 ? len(g, f.node, room) : literal_rest(n, f);
    case NodeKind::any_value:
      return 1;
    case NodeKind::any_of:
      return kNever;
  }
  return kNever;
}

// A node's min_len at `room` from its children's current tables.
uint32_t node_len(const Grammar& g, uint32_t node, int room) {
  if (room <= 0) return kNever;
  const Node& n = g.nodes[node];
  Frame f;  // phase 0: before the value's first byte
  f.node = node;
  const int cr = room - 1;
  switch (n.kind) {
    case NodeKind::document:
      return len(g, n.items, cr);
    case NodeKind::any_value:
      return 1;
    case NodeKind::any_of: {
      uint32_t best = kNever;
      for (uint32_t a : n.alts) best = std::min(best, len(g, a, room));
      return best;
    }
    case NodeKind::object:
    case NodeKind::map:
    case NodeKind::array:
      return room < 2 ? kNever : frame_rest(g, f, room);
    case NodeKind::string:
    case NodeKind::number:
      return frame_rest(g, f, room);
    case NodeKind::literals: {
      uint32_t best = kNever;
      for (const std::string& s : n.literals) best = std::min<uint32_t>(best, s.size());
      return best;
    }
  }
  return kNever;
}

}  // namespace

uint32_t cheapest_member(const Grammar& g, const Node& n, uint32_t from, int room) {
  if (!n.cheapest.empty() && room >= 0) return n.cheapest[room * (n.props.size() + 1) + from];
  // Up to and including the first required property. Before it, the tail
  // after any member is the tail from `from`: one sum, not one per member,
  // so an object of many optional properties costs linear time.
  const uint32_t tail_from = object_tail(g, n, from, room);
  uint32_t best = UINT32_MAX, best_cost = kNever;
  for (uint32_t j = from; j < n.props.size(); ++j) {
    const uint32_t after = n.props[j].required ? object_tail(g, n, j + 1, room) : tail_from;
    const uint32_t c = add(member_cost(g, n.props[j], room), after);
    if (len(g, n.props[j].value, room) < kNever && c < best_cost) {
      best = j;
      best_cost = c;
    }
    if (n.props[j].required) break;
  }
  return best;
}

uint32_t closing_bytes(const Grammar& g, const Thread& t) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < t.depth; ++i) {
    Frame f = t.f[i];
    const Node& n = g.nodes[f.node];
    const bool child_literal =
        i + 1 < t.depth && g.nodes[t.f[i + 1].node].kind == NodeKind::literals;
    if (n.unique_of != UINT32_MAX && child_literal) {
      // The value being written is the child's shortest choice: used.
      const uint32_t k = literal_choice(g.nodes[t.f[i + 1].node], t.f[i + 1], f.b);
      if (k < 32) f.b |= 1u << k;
    }
    if (n.kind == NodeKind::literals && i > 0 && g.nodes[t.f[i - 1].node].unique_of != UINT32_MAX) {
      total += literal_rest(n, f, t.f[i - 1].b);
    } else {
      total += frame_rest(g, f, kMaxFrames - static_cast<int>(i));
    }
    if (total >= kNever) return kNever;
  }
  return static_cast<uint32_t>(total);
}

uint32_t shortest_reply(const Grammar& g) { return len(g, g.document, kMaxFrames); }

void compute_min_len(Grammar& g, CompileBudget* budget) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t i = 0; i < g.nodes.size(); ++i) {
      if (budget) budget->tick();
      for (int r = 1; r <= kMaxFrames; ++r) {
        const uint32_t v = node_len(g, i, r);
        if (v < g.nodes[i].min_len[r]) {
          g.nodes[i].min_len[r] = v;
          changed = true;
        }
      }
    }
  }
  // The bound: every frame at its costliest phase, kMaxFrames deep.
  uint64_t worst = 0;
  auto longest = [&](uint32_t node) -> uint64_t {
    uint64_t m = 0;
    for (uint32_t v : g.nodes[node].min_len) {
      if (v < kNever) m = std::max<uint64_t>(m, v);
    }
    return m;
  };
  for (const Node& n : g.nodes) {
    uint64_t w = 8;
    switch (n.kind) {
      case NodeKind::object:
        for (const Property& p : n.props) w += p.key_json.size() + 2 + longest(p.value);
        break;
      case NodeKind::map:
        w += longest(n.items);
        break;
      case NodeKind::array:
        if (n.unique_of != UINT32_MAX) {
          for (const std::string& l : g.nodes[n.unique_of].literals) w += l.size() + 1;
        }
        for (uint32_t i = 0; i < n.min_items && i < n.prefix.size(); ++i)
          w += 1 + longest(n.prefix[i]);
        if (n.min_items > n.prefix.size())
          w += uint64_t(n.min_items - n.prefix.size()) * (1 + longest(n.items));
        w += longest(n.item_node(0));
        break;
      case NodeKind::string:
        w += n.min_chars + format_max_remaining(n.format);
        if (n.pattern) w += g.patterns[n.pattern - 1].max_dist;
        break;
      case NodeKind::number:
        w += kMaxIntDigits + 2;
        break;
      case NodeKind::literals:
        for (const std::string& l : n.literals) w = std::max<uint64_t>(w, l.size());
        break;
      default:
        break;
    }
    worst = std::max(worst, w);
  }
  g.closing_bound = static_cast<uint32_t>(std::min<uint64_t>(worst * (kMaxFrames + 1), kNever));
  for (Node& n : g.nodes) {
    if (n.kind != NodeKind::object) continue;
    // Filled from the last property back, so each room costs linear time:
    // the same values object_tail and cheapest_member compute from scratch
    // (ties go to the earlier property, as there).
    const size_t w = n.props.size() + 1;
    std::vector<uint32_t> tails(w * (kMaxFrames + 1)), cheapest(w * (kMaxFrames + 1));
    for (int r = 0; r <= kMaxFrames; ++r) {
      if (budget) budget->tick();
      uint32_t* tail = &tails[r * w];
      uint32_t* best = &cheapest[r * w];
      tail[w - 1] = 1;
      best[w - 1] = UINT32_MAX;
      for (uint32_t j = static_cast<uint32_t>(w - 1); j-- > 0;) {
        const Property& p = n.props[j];
        const uint32_t cost = member_cost(g, p, r);
        tail[j] = p.required ? add(tail[j + 1], 1 + uint64_t(cost)) : tail[j + 1];
        const uint32_t c = add(cost, tail[j + 1]);
        const uint32_t later = p.required ? UINT32_MAX : best[j + 1];
        const uint32_t later_cost =
            later == UINT32_MAX ? kNever : add(member_cost(g, n.props[later], r), tail[later + 1]);
        const bool fits = len(g, p.value, r) < kNever && c < kNever;
        best[j] = fits && c <= later_cost ? j : later;
      }
    }
    n.tails = std::move(tails);
    n.cheapest = std::move(cheapest);
  }
}

}  // namespace rc::structured
