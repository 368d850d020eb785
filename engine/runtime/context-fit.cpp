#include "radixchat/context-fit.h"

#include <algorithm>

namespace rc {

const char* context_policy_name(ContextPolicy p) {
  switch (p) {
    case ContextPolicy::stop:
      return "stop";
    case ContextPolicy::truncate_middle:
      return "truncate-middle";
    case ContextPolicy::rolling_window:
      return "rolling-window";
  }
  return "?";
}

std::optional<ContextPolicy> parse_context_policy(std::string_view name) {
  for (ContextPolicy p :
       {ContextPolicy::stop, ContextPolicy::truncate_middle, ContextPolicy::rolling_window}) {
    if (name == context_policy_name(p)) return p;
  }
  return std::nullopt;
}

TokenCounter chat_token_counter(const Engine& engine) {
  return [&engine](const std::vector<ChatMessage>& m) -> Result<int> {
    Result<std::vector<int32_t>> t = engine.render_chat(m);
    if (!t.ok()) return t.status();
    return static_cast<int>(t->size());
  };
}

namespace {

// The messages always kept: the system prompt, and for truncate-middle the
// first exchange too (never the message being answered).
size_t head_size(const std::vector<ChatMessage>& m, ContextPolicy policy) {
  size_t h = !m.empty() && m[0].role == "system" ? 1 : 0;
  if (policy != ContextPolicy::truncate_middle) return h;
  size_t e = h;
  if (e < m.size() && m[e].role == "user") ++e;
  while (e < m.size() && m[e].role != "user") ++e;
  return e < m.size() ? e : h;
}

std::vector<ChatMessage> window(const std::vector<ChatMessage>& m, size_t head, size_t cut,
                                size_t last) {
  std::vector<ChatMessage> w(m.begin(), m.begin() + head);
  w.insert(w.end(), m.begin() + cut, m.begin() + last + 1);
  return w;
}

Status too_long(int tokens, int budget, const char* what) {
  return Status(StatusCode::too_long, std::string(what) + " needs " + std::to_string(tokens) +
                                          " tokens; the context leaves " + std::to_string(budget) +
                                          " for it");
}

}  // namespace

Result<ContextFit> fit_context(const std::vector<ChatMessage>& m, int budget, ContextPolicy policy,
                               const TokenCounter& count, double low_water) {
  if (m.empty()) return Status(StatusCode::invalid_argument, "no messages");
  Result<int> all = count(m);
  if (!all.ok()) return all.status();
  ContextFit out;
  // A conversation that fits now fitted at every earlier turn (each was a
  // prefix of it): nothing was ever cut.
  if (*all <= budget) {
    out.messages = m;
    out.prompt_tokens = *all;
    return out;
  }
  if (policy == ContextPolicy::stop) {
    Status st = too_long(*all, budget, "the conversation");
    return Status(StatusCode::too_long,
                  st.message() +
                      " (policy: stop; start a new chat, or let the chat drop old "
                      "turns: truncate-middle or rolling-window)");
  }
  const size_t n = m.size(), head = head_size(m, policy);
  // Where a kept history may start (a user turn), and the turns at which a
  // request was made (each user message, and the message answered now).
  std::vector<size_t> starts;
  for (size_t i = head; i < n; ++i) {
    if (m[i].role == "user" || i == head || i == n - 1) starts.push_back(i);
  }
  const int low = static_cast<int>(budget * low_water);
  size_t cut = head, cut_before = head;
  int tokens = 0;
  for (size_t t : starts) {
    if (m[t].role != "user" && t != n - 1) continue;
    cut_before = cut;
    Result<int> c = count(window(m, head, cut, t));
    if (!c.ok()) return c.status();
    if (*c > budget) {
      for (size_t s : starts) {
        if (s <= cut || s > t) continue;
        cut = s;
        c = count(window(m, head, cut, t));
        if (!c.ok()) return c.status();
        if (*c <= low) break;
      }
    }
    tokens = *c;
  }
  if (tokens > budget) {
    return too_long(tokens, budget,
                    head ? "the last message with the kept start of the chat" : "the last message");
  }
  out.messages = window(m, head, cut, n - 1);
  out.dropped = static_cast<int>(cut - head);
  out.prefix_changed = cut != cut_before;
  out.prompt_tokens = tokens;
  return out;
}

}  // namespace rc
