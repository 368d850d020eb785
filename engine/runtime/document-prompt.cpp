// place_documents(): a request's documents into its prompt, through the
// public Engine API only (radixchat/documents.h).
#include <algorithm>

#include "radixchat/documents.h"
#include "radixchat/engine.h"

namespace rc {
namespace {

// The prompt tokens a request renders to, as Engine::submit makes them: a
// chat through its template, a plain prompt with BOS.
Result<std::vector<int32_t>> prompt_of(const Engine& engine, const GenerateRequest& req) {
  if (!req.messages.empty()) return engine.render_chat(req.messages);
  return engine.tokenize(req.prompt, true);
}

}  // namespace

int PlacedDocuments::cached(int cached_tokens) const {
  return std::clamp(cached_tokens - start, 0, tokens);
}

Result<PlacedDocuments> place_documents(const Engine& engine, GenerateRequest& req,
                                        const DocumentSet& set) {
  if (req.messages.empty() && req.prompt.empty()) {
    return Status(StatusCode::invalid_argument,
                  "documents need a chat or a text prompt, not token ids");
  }
  auto count = [&engine](std::string_view text) {
    auto ids = engine.tokenize(std::string(text), false);
    return ids.ok() ? static_cast<int>(ids->size()) : static_cast<int>(text.size());
  };
  const int budget =
      set.budget_tokens > 0 ? set.budget_tokens : engine.model_info().context_length / 2;
  PlacedDocuments placed;
  placed.layout = layout_documents(set, budget, count);
  Result<std::vector<int32_t>> without = prompt_of(engine, req);
  if (!without.ok()) return without.status();
  if (!req.messages.empty()) {
    req.messages = messages_with_documents(std::move(req.messages), placed.layout);
  } else if (!placed.layout.text.empty()) {
    req.prompt = system_with_documents("", placed.layout) + "\n" + req.prompt;
  }
  Result<std::vector<int32_t>> with = prompt_of(engine, req);
  if (!with.ok()) return with.status();
  // The documents lie between what the two renderings share at the start
  // and what they share at the end.
  const std::vector<int32_t>& a = without.value();
  const std::vector<int32_t>& b = with.value();
  size_t start = 0;
  while (start < a.size() && start < b.size() && a[start] == b[start]) ++start;
  placed.start = static_cast<int>(start);
  placed.tokens = static_cast<int>(b.size() >= a.size() ? b.size() - a.size() : 0);
  return placed;
}

}  // namespace rc
