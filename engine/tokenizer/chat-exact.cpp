#include "chat-exact.h"

#include <algorithm>

namespace rc::tok {

namespace {

// Stands for a reply's content while the template renders. No content may
// contain it (checked), so every occurrence in a rendering is one of ours.
constexpr std::string_view kMark = "\x1Arc-reply-";
constexpr char kMarkEnd = '\x1A';

std::string placeholder(size_t i) { return std::string(kMark) + std::to_string(i) + kMarkEnd; }

Result<std::vector<ChatSegment>> render_marked(const ChatTemplate& tmpl,
                                               std::span<const ChatMessage> msgs,
                                               const std::vector<size_t>& chosen, bool prompt) {
  std::vector<ChatMessage> m(msgs.begin(), msgs.end());
  for (size_t i : chosen) m[i].content = placeholder(i);
  return tmpl.render_segments(m, prompt);
}

// Whether `marked` with every chosen placeholder replaced by its message's
// content is exactly `plain`, each placeholder occurring once and ending
// its text run: then the template wrote those contents verbatim, followed
// by a marker, and they can be swapped for ids.
bool verbatim(std::vector<ChatSegment> marked, const std::vector<ChatSegment>& plain,
              std::span<const ChatMessage> msgs, const std::vector<size_t>& chosen) {
  for (size_t i : chosen) {
    const std::string p = placeholder(i);
    int seen = 0;
    for (ChatSegment& s : marked) {
      if (s.kind != ChatSegment::Kind::text) continue;
      for (size_t at = s.text.find(p); at != std::string::npos; at = s.text.find(p, at)) {
        // Text right after the reply in the same run (llama2's " A ") would
        // be encoded on its own, unlike when the text is encoded whole.
        if (at + p.size() != s.text.size()) return false;
        s.text.replace(at, p.size(), msgs[i].content);
        at += msgs[i].content.size();
        ++seen;
      }
    }
    if (seen != 1) return false;
  }
  if (marked.size() != plain.size()) return false;
  for (size_t k = 0; k < plain.size(); ++k) {
    if (marked[k].kind != plain[k].kind || marked[k].text != plain[k].text) return false;
  }
  return true;
}

// `marked` with each placeholder cut out of its text segment and replaced
// by an ids segment.
std::vector<ChatSegment> splice(const std::vector<ChatSegment>& marked,
                                std::span<const ChatMessage> msgs,
                                std::span<const std::span<const int32_t>> ids) {
  std::vector<ChatSegment> out;
  for (const ChatSegment& s : marked) {
    if (s.kind != ChatSegment::Kind::text) {
      out.push_back(s);
      continue;
    }
    std::string_view rest = s.text;
    for (size_t at = rest.find(kMark); at != std::string_view::npos; at = rest.find(kMark)) {
      const size_t end = rest.find(kMarkEnd, at + kMark.size());
      const size_t i = std::stoul(std::string(rest.substr(at + kMark.size(), end)));
      if (at > 0) out.push_back({ChatSegment::Kind::text, std::string(rest.substr(0, at)), {}});
      out.push_back({ChatSegment::Kind::ids, msgs[i].content,
                     std::vector<int32_t>(ids[i].begin(), ids[i].end())});
      rest = rest.substr(end + 1);
    }
    if (!rest.empty()) out.push_back({ChatSegment::Kind::text, std::string(rest), {}});
  }
  return out;
}

}  // namespace

std::optional<std::string> reply_text(const Tokenizer& tok, std::span<const int32_t> ids) {
  StreamDecoder dec(tok);
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    if (id < 0 || id >= tok.n_vocab()) return std::nullopt;
    if (tok.is_eog(id) && i + 1 == ids.size()) return std::nullopt;
    text += dec.push(id);
  }
  if (!dec.flush().empty()) return std::nullopt;
  return text;
}

Result<ExactRender> render_tokens_exact(const ChatTemplate& tmpl, const Tokenizer& tok,
                                        std::span<const ChatMessage> messages,
                                        std::span<const std::span<const int32_t>> ids,
                                        bool add_assistant_prompt) {
  std::vector<size_t> candidates;
  bool marked_text = false;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    marked_text = marked_text || m.content.find(kMark) != std::string::npos;
    if (ids.size() != messages.size() || m.role != "assistant" || ids[i].empty()) continue;
    if (reply_text(tok, ids[i]) == m.content) candidates.push_back(i);
  }
  if (marked_text) candidates.clear();
  ExactRender out;
  Result<std::vector<ChatSegment>> plain = tmpl.render_segments(messages, add_assistant_prompt);
  if (!plain.ok()) return plain.status();
  std::vector<ChatSegment> segments;
  auto fits = [&](const std::vector<size_t>& chosen) {
    Result<std::vector<ChatSegment>> marked =
        render_marked(tmpl, messages, chosen, add_assistant_prompt);
    if (!marked.ok() || !verbatim(*marked, *plain, messages, chosen)) return false;
    segments = splice(*marked, messages, ids);
    out.spliced = static_cast<int>(chosen.size());
    return true;
  };
  // All at once (the usual case); else one by one, keeping those the
  // template writes verbatim.
  if (!candidates.empty() && !fits(candidates)) {
    std::vector<size_t> chosen;
    for (size_t c : candidates) {
      chosen.push_back(c);
      if (!fits(chosen)) chosen.pop_back();
    }
  }
  if (out.spliced == 0) segments = std::move(*plain);
  Result<std::vector<int32_t>> tokens = encode_segments(tok, segments);
  if (!tokens.ok()) return tokens.status();
  out.tokens = std::move(tokens.value());
  return out;
}

}  // namespace rc::tok
