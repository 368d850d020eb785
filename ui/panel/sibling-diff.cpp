#include "panel/sibling-diff.h"

#include <algorithm>
#include <cstdio>

#include "panel/label-text.h"

namespace rc::ui::panel {

namespace {

// Tokens of context decoded before a span: enough for a tokenizer's
// leading-space rule and a character split across the node boundary.
constexpr size_t kContextTokens = 8;
// The labels' one-line form is compared at the length a box label is cut
// from (tree-view-nodes.cpp).
constexpr size_t kShownChars = 160;
constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// `s` without whitespace or control bytes: what is left to read.
std::string readable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (!is_space(c) && u >= 0x20 && u != 0x7F) out += c;
  }
  return out;
}

std::string leading_space(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(0, i);
}

std::string trailing_space(const std::string& s) {
  size_t i = s.size();
  while (i > 0 && is_space(s[i - 1])) --i;
  return s.substr(i);
}

// Code points before the first byte where `a` and `b` differ.
int64_t first_differing_char(const std::string& a, const std::string& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  int64_t points = 0;
  for (size_t k = 0; k < i; ++k) points += (static_cast<unsigned char>(a[k]) & 0xC0) != 0x80;
  return points;
}

std::vector<Token> concat(const std::vector<Token>& a, const Token* b, size_t n) {
  std::vector<Token> out = a;
  out.insert(out.end(), b, b + n);
  return out;
}

// Where `a` parts from its sibling `b` (both after `ctx`), and why they look alike.
SiblingDiff compare(const TreeNode& a, const TreeNode& b, const std::vector<Token>& ctx,
                    const SiblingDiffs::TokensText& text, const std::string& label_a,
                    const std::string& label_b) {
  SiblingDiff d;
  d.node = a.id;
  d.sibling = b.id;
  const size_t n = std::min(a.tokens.size(), b.tokens.size());
  size_t i = 0;
  while (i < n && a.tokens[i] == b.tokens[i]) ++i;
  d.span_index = i;
  d.path_index = a.depth_tokens + int64_t(i);
  d.token = i < a.tokens.size() ? a.tokens[i] : -1;
  d.sibling_token = i < b.tokens.size() ? b.tokens[i] : -1;
  // A piece is what the token adds after everything before it: decoded
  // alone, a tokenizer may drop its leading space.
  const std::vector<Token> before = concat(ctx, a.tokens.data(), i);
  const std::string before_text = text(before);
  auto piece = [&](Token t) -> std::string {
    if (t < 0) return "";
    std::vector<Token> with = before;
    with.push_back(t);
    const std::string s = text(with);
    if (s.size() >= before_text.size() && s.compare(0, before_text.size(), before_text) == 0)
      return s.substr(before_text.size());
    return text({t});
  };
  const std::string pa = piece(d.token), pb = piece(d.sibling_token);
  d.piece = visible_text(pa);
  d.sibling_piece = visible_text(pb);
  const std::string fa = text(concat(ctx, a.tokens.data(), a.tokens.size()));
  const std::string fb = text(concat(ctx, b.tokens.data(), b.tokens.size()));
  if (fa == fb) {
    if (pa.empty() || pb.empty())
      d.why = LookAlike::whitespace_control;  // a control token adds nothing to read
    else if (pa.find(kReplacement) != std::string::npos ||
             pb.find(kReplacement) != std::string::npos)
      d.why = LookAlike::same_text_bytes;
    else if (leading_space(pa) != leading_space(pb) || trailing_space(pa) != trailing_space(pb))
      d.why = LookAlike::same_text_space;
    else
      d.why = LookAlike::same_text_split;
  } else if (readable(fa) == readable(fb)) {
    d.why = LookAlike::whitespace_control;
  } else {
    d.why = LookAlike::label_only;
    d.text_offset =
        label_a != label_b
            ? first_differing_char(label_a, label_b)
            : std::max<int64_t>(first_differing_char(fa, fb) - first_differing_char(fa, text(ctx)),
                                0);
  }
  return d;
}

}  // namespace

std::string look_alike_why(LookAlike why, int64_t text_offset) {
  switch (why) {
    case LookAlike::same_text_split:
      return "the same text split into other tokens (a re-encoded reply?)";
    case LookAlike::same_text_space:
      return "the same text; a space or line break sits in a different token";
    case LookAlike::same_text_bytes:
      return "the same text; one side spells a character in byte tokens";
    case LookAlike::whitespace_control:
      return "differs only in whitespace/control tokens";
    case LookAlike::label_only:
      return "the labels look the same; the texts differ from character " +
             std::to_string(text_offset + 1);
  }
  return "";
}

std::string visible_text(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  char buf[8];
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == ' ') {
      out += "\xC2\xB7";  // "·"
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c < 0x80) {
      out += char(c);
    } else {
      // A whole, valid UTF-8 sequence stays; anything else is shown by byte.
      const size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                         : c >= 0xE0 && c <= 0xEF ? 3
                         : c >= 0xF0 && c <= 0xF4 ? 4
                                                  : 0;
      bool ok = len > 0 && i + len <= s.size();
      for (size_t k = 1; ok && k < len; ++k)
        ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
      if (!ok) {
        std::snprintf(buf, sizeof buf, "\\x%02X", c);
        out += buf;
        ++i;
        continue;
      }
      if (s.compare(i, len, kReplacement) == 0)
        out += "\\uFFFD";
      else
        out.append(s, i, len);
      i += len;
      continue;
    }
    ++i;
  }
  return out;
}

std::string token_and_piece(Token t, const std::string& piece) {
  if (t < 0) return "(the span ends here)";
  if (piece.empty()) return std::to_string(t) + " (renders as nothing: a control token)";
  return std::to_string(t) + " \"" + piece + "\"";
}

std::string first_difference_where(const SiblingDiff& d) {
  auto ordinal = [](size_t k) {
    const char* suffix = "th";
    if (k % 100 < 11 || k % 100 > 13) {
      if (k % 10 == 1) suffix = "st";
      if (k % 10 == 2) suffix = "nd";
      if (k % 10 == 3) suffix = "rd";
    }
    return std::to_string(k) + suffix;
  };
  return "token " + std::to_string(d.path_index + 1) + " of the prompt path (" +
         ordinal(d.span_index + 1) + " of this node)";
}

bool SiblingDiffs::update(const TreeModel& m, const void* source, const TokensText& text,
                          const LabelText& label, double now) {
  const bool same = model_ == &m && source_ == source;
  if (same && structure_ == m.structure_version()) return false;
  if (same && m.size() > big_tree && now - at_ < big_tree_gap) return false;
  model_ = &m;
  source_ = source;
  structure_ = m.structure_version();
  at_ = now;
  ++computations_;
  diffs_.clear();
  if (!text || !label) return true;
  std::unordered_map<std::string, std::vector<size_t>> by_readable, by_shown;
  std::vector<const TreeNode*> kids;
  std::vector<std::string> readable_of, shown_of;
  for (const auto& [pid, p] : m.nodes()) {
    if (p.children.size() < 2) continue;
    kids.clear();
    for (NodeId c : p.children) {
      const TreeNode* cn = m.find(c);
      if (cn && cn->parent == pid && !cn->tokens.empty()) kids.push_back(cn);
    }
    if (kids.size() < 2) continue;
    by_readable.clear();
    by_shown.clear();
    readable_of.assign(kids.size(), {});
    shown_of.assign(kids.size(), {});
    for (size_t k = 0; k < kids.size(); ++k) {
      const std::string& full = label(*kids[k]);
      readable_of[k] = readable(full);
      shown_of[k] = one_line(full, kShownChars);
      by_readable[readable_of[k]].push_back(k);
      by_shown[shown_of[k]].push_back(k);
    }
    std::vector<Token> ctx;  // the parent path's tail, decoded only when needed
    bool have_ctx = false;
    for (size_t k = 0; k < kids.size(); ++k) {
      // The first other sibling that reads the same, else one whose label
      // looks the same.
      const std::vector<size_t>* group = &by_readable[readable_of[k]];
      if (group->size() < 2) group = &by_shown[shown_of[k]];
      if (group->size() < 2) continue;
      const size_t other = (*group)[0] == k ? (*group)[1] : (*group)[0];
      if (kids[k]->tokens == kids[other]->tokens) continue;  // nothing differs
      if (!have_ctx) {
        const std::vector<Token> path = m.path_tokens(pid);
        ctx.assign(path.end() - std::ptrdiff_t(std::min(path.size(), kContextTokens)), path.end());
        have_ctx = true;
      }
      SiblingDiff d =
          compare(*kids[k], *kids[other], ctx, text, label(*kids[k]), label(*kids[other]));
      d.others = group->size() - 2;
      diffs_.emplace(d.node, std::move(d));
    }
  }
  return true;
}

void SiblingDiffs::clear() {
  diffs_.clear();
  model_ = nullptr;
  source_ = nullptr;
  structure_ = UINT64_MAX;
}

const SiblingDiff* SiblingDiffs::find(NodeId id) const {
  auto it = diffs_.find(id);
  return it == diffs_.end() ? nullptr : &it->second;
}

}  // namespace rc::ui::panel
