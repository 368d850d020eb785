// Export of a conversation's current thread as Markdown and as JSON.
#include <cstdio>
#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

#include "store/store-rows.h"
#include "store/store.h"

namespace rc::store {
namespace {

std::string iso8601(std::int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

const char* heading(Role role) {
  switch (role) {
    case Role::system:
      return "System";
    case Role::user:
      return "User";
    case Role::assistant:
      return "Assistant";
  }
  return "User";
}

// "model · 120 prompt tokens (96 cached) · 40 tokens · TTFT 35 ms · 51.2 tok/s · stop"
std::string metrics_line(const Message& m) {
  std::string out = m.model;
  auto add = [&out](const std::string& part) {
    if (!out.empty()) out += " · ";
    out += part;
  };
  if (m.metrics) {
    const MessageMetrics& x = *m.metrics;
    char buf[64];
    add(std::to_string(x.prompt_tokens) + " prompt tokens (" + std::to_string(x.cached_tokens) +
        " cached)");
    add(std::to_string(x.completion_tokens) + " tokens");
    std::snprintf(buf, sizeof buf, "TTFT %.0f ms", x.ttft_ms);
    add(buf);
    std::snprintf(buf, sizeof buf, "%.1f tok/s", x.tokens_per_s);
    add(buf);
    if (!x.finish_reason.empty()) add(x.finish_reason);
  }
  return out;
}

// Quotes every line of `text` as a Markdown block quote.
std::string quote(const std::string& text) {
  std::string out = "> ";
  for (char ch : text) {
    out += ch;
    if (ch == '\n') out += "> ";
  }
  return out;
}

}  // namespace

Result<std::string> Store::export_markdown(Id conversation_id) {
  auto conv = get_conversation(conversation_id);
  if (!conv.ok()) return conv.status();
  auto thread = current_thread(conversation_id);
  if (!thread.ok()) return thread.status();

  std::string md =
      "# " + (conv->title.empty() ? std::string("Untitled chat") : conv->title) + "\n\n";
  if (!conv->system_prompt.empty()) {
    md += "**System prompt:**\n\n" + quote(conv->system_prompt) + "\n\n";
  }
  for (const Message& m : thread.value()) {
    md += "## ";
    md += heading(m.role);
    md += "\n\n" + m.content + "\n\n";
    if (m.role == Role::assistant) {
      const std::string line = metrics_line(m);
      if (!line.empty()) md += "*" + line + "*\n\n";
    }
  }
  return md;
}

Result<std::string> Store::export_json(Id conversation_id) {
  auto conv = get_conversation(conversation_id);
  if (!conv.ok()) return conv.status();
  auto thread = current_thread(conversation_id);
  if (!thread.ok()) return thread.status();

  nlohmann::json messages = nlohmann::json::array();
  for (const Message& m : thread.value()) {
    nlohmann::json j = {{"id", m.id},
                        {"parent_id", m.parent_id ? nlohmann::json(*m.parent_id) : nullptr},
                        {"role", role_name(m.role)},
                        {"content", m.content},
                        {"created_at", iso8601(m.created_at_ms)},
                        {"model", m.model}};
    if (m.metrics) {
      j["metrics"] = {{"prompt_tokens", m.metrics->prompt_tokens},
                      {"cached_tokens", m.metrics->cached_tokens},
                      {"completion_tokens", m.metrics->completion_tokens},
                      {"ttft_ms", m.metrics->ttft_ms},
                      {"tokens_per_s", m.metrics->tokens_per_s},
                      {"finish_reason", m.metrics->finish_reason}};
    }
    messages.push_back(std::move(j));
  }
  nlohmann::json doc = {
      {"format", "radixchat-conversation"},
      {"version", 1},
      {"title", conv->title},
      {"created_at", iso8601(conv->created_at_ms)},
      {"updated_at", iso8601(conv->updated_at_ms)},
      {"system_prompt", conv->system_prompt},
      {"sampling", nlohmann::json::parse(detail::sampling_to_json(conv->sampling))},
      {"messages", std::move(messages)},
  };
  // replace: invalid UTF-8 in content (a model can emit a split code point)
  // becomes U+FFFD instead of throwing out of dump().
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace rc::store
