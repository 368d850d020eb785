// `radixchat-cli chat`: a multi-turn terminal chat. Each turn re-sends the
// whole conversation; the radix cache serves the earlier turns, and the
// per-turn figures show how many prompt tokens came from the cache. Past the
// context, old turns are dropped in steps (rc::fit_context, --overflow).
#include <algorithm>
#include <cstdio>
#include <future>
#include <iostream>

#include "commands.h"
#include "document-options.h"
#include "engine-options.h"
#include "radixchat/context-fit.h"

namespace rc::cli {

namespace {

struct ChatOptions {
  EngineOptions engine;
  DocumentOptions documents;
  std::string system;
  int max_tokens = 256;
  float temperature = 0.0f;
  uint64_t seed = 0;
  std::string overflow = "rolling-window";
};

int run_chat(const ChatOptions& o) {
  std::unique_ptr<Engine> engine = open_engine(o.engine.config);
  if (!engine) return 1;
  const ModelInfo& info = engine->model_info();
  std::fprintf(stderr, "%s (%s, context %d) on %s — %s. Cache: %s.\n", info.name.c_str(),
               info.architecture.c_str(), info.context_length, info.device.c_str(),
               info.backend_reason.c_str(), info.cache.c_str());
  std::fprintf(stderr, "Chat template: %s.\n", info.chat_template_detail.c_str());
  const ContextPolicy policy =
      parse_context_policy(o.overflow).value_or(ContextPolicy::rolling_window);
  const TokenCounter count = chat_token_counter(*engine);
  std::unique_ptr<library::Library> lib;
  std::vector<std::string> doc_names;
  if (!o.documents.resolve(*engine, lib, doc_names)) return 1;
  if (!doc_names.empty()) std::fprintf(stderr, "Documents: %zu.\n", doc_names.size());
  std::fprintf(stderr, "Type a message; /reset starts over, /quit or Ctrl-D leaves.\n");

  std::vector<ChatMessage> messages;
  if (!o.system.empty()) messages.push_back({"system", o.system});
  std::string line;
  for (;;) {
    std::fprintf(stderr, "\n> ");
    if (!std::getline(std::cin, line) || line == "/quit") break;
    if (line.empty()) continue;
    if (line == "/reset") {
      messages.resize(o.system.empty() ? 0 : 1);
      std::fprintf(stderr, "(new conversation)\n");
      continue;
    }
    messages.push_back({"user", line});
    // The documents join the system message of this turn's prompt only
    // (the history keeps the plain one); fitting then counts them.
    GenerateRequest turn;
    turn.messages = messages;
    PlacedDocuments placed;
    if (lib) {
      // Retrieval, when the documents exceed their budget, looks at the
      // question and the turn before it.
      std::string question = line;
      if (messages.size() >= 3) question += "\n" + messages[messages.size() - 3].content;
      auto set = document_set(*lib, doc_names, question);
      Result<PlacedDocuments> p = set.ok() ? place_documents(*engine, turn, set.value())
                                           : Result<PlacedDocuments>(set.status());
      if (!p.ok()) {
        messages.pop_back();
        fail(p.status().message());
        continue;
      }
      placed = std::move(p.value());
    }
    const int budget = info.context_length - std::min(o.max_tokens, info.context_length / 4);
    Result<ContextFit> fit = fit_context(turn.messages, budget, policy, count);
    if (!fit.ok()) {
      messages.pop_back();
      fail(fit.status());
      continue;
    }
    if (fit->prefix_changed) {
      std::fprintf(stderr,
                   "(the earliest %d messages no longer fit the context; the cached prefix "
                   "changed)\n",
                   fit->dropped);
    }
    GenerateRequest req;
    req.messages = std::move(fit->messages);
    req.max_tokens = o.max_tokens;
    req.sampling.temperature = o.temperature;
    req.sampling.seed = o.seed;
    std::string reply;
    std::promise<StreamEvent> done;
    Result<RequestId> id = engine->submit(req, [&](const StreamEvent& ev) {
      reply += ev.text;
      std::fwrite(ev.text.data(), 1, ev.text.size(), stdout);
      std::fflush(stdout);
      if (ev.finished) done.set_value(ev);
      return true;
    });
    if (!id.ok()) {
      messages.pop_back();
      fail(id.status());
      continue;
    }
    StreamEvent end = done.get_future().get();
    std::printf("\n");
    std::fflush(stdout);  // the figures go to stderr after the reply
    if (end.reason == FinishReason::error) {
      messages.pop_back();
      fail(end.error);
      continue;
    }
    messages.push_back({"assistant", reply});
    const RequestMetrics& m = end.metrics;
    const double decode_s = (m.total_ms - m.ttft_ms) / 1000.0;
    std::fprintf(stderr,
                 "[prompt %d tokens: %d cached%s, %d computed%s | TTFT %.1f ms | %.1f tok/s]\n",
                 m.prompt_tokens, m.cached_tokens, tier_note(m).c_str(), m.computed_tokens,
                 document_note(placed, m).c_str(), m.ttft_ms,
                 m.output_tokens > 1 && decode_s > 0 ? (m.output_tokens - 1) / decode_s : 0.0);
  }
  report_tier_trouble(*engine);
  return 0;
}

}  // namespace

Command add_chat_command(CLI::App& root) {
  auto o = std::make_shared<ChatOptions>();
  auto* app = root.add_subcommand("chat", "Interactive multi-turn chat in the terminal");
  o->engine.add_to(*app);
  o->documents.add_to(*app);
  app->add_option("--system", o->system, "system prompt");
  app->add_option("--max-tokens", o->max_tokens, "most tokens per reply")
      ->check(CLI::PositiveNumber);
  app->add_option("--temperature", o->temperature, "0 = greedy")->check(CLI::NonNegativeNumber);
  app->add_option("--seed", o->seed, "sampling seed");
  app->add_option("--overflow", o->overflow,
                  "past the context: rolling-window (default; keeps the system prompt and the "
                  "latest turns), truncate-middle (keeps the first exchange too) or stop")
      ->check(CLI::IsMember({"rolling-window", "truncate-middle", "stop"}));
  return {app, [o] { return run_chat(*o); }};
}

}  // namespace rc::cli
