// `radixchat-cli cache-report RECORDING [--json]`: the hit rate of a
// recording, why each request that missed did (its prompt against the best
// cached path when it was matched), and the prompt-layout advisor's
// findings (recording/cache-report.h). With a model (--model, or the
// bundled one when the recording was made with it) token spans are shown
// as text; otherwise as ids; in a redacted recording as lengths.
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "engine-options.h"
#include "recording/cache-report.h"
#include "recording/chain-fold.h"
#include "recording/miss-analysis.h"
#include "recording/redaction.h"

namespace rc::cli {

namespace {

using recording::CacheReport;
using Ids = std::vector<int32_t>;

struct Text {
  std::unique_ptr<Engine> engine;
  bool redacted = false;  // hashed ids (recording/redaction.h): lengths only
  // One line: newlines and tabs made visible.
  std::string operator()(const Ids& ids) const {
    if (redacted) return recording::redacted_label(ids.size());
    std::string raw;
    if (engine) {
      raw = engine->detokenize(ids);
    } else {
      for (int32_t t : ids) raw += (raw.empty() ? "[" : " ") + std::to_string(t);
      raw += raw.empty() ? "[]" : "]";
    }
    std::string out;
    for (char c : raw)
      out += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : std::string(1, c);
    return out;
  }
};

std::unique_ptr<Engine> open_text_engine(const std::string& model,
                                         const std::map<std::string, std::string>& meta) {
  auto it = meta.find("model");
  EngineConfig cfg;
  cfg.model_path = model;
  cfg.kv_pool_tokens = 1024;  // only the tokenizer is used
  cfg.n_threads = 1;
  if (model.empty() && (it == meta.end() || it->second != "radixchat-demo")) return nullptr;
  auto e = Engine::create(cfg);
  if (!e.ok()) {
    if (!model.empty()) {
      fail(e.status());
      return nullptr;
    }
    std::fprintf(stderr, "radixchat-cli: %s (showing token ids)\n", e.status().message().c_str());
    return nullptr;
  }
  return std::move(e.value());
}

nlohmann::json to_json(const CacheReport& r, const Text& text) {
  nlohmann::json misses = nlohmann::json::array();
  for (const auto& m : r.misses) {
    misses.push_back({{"request", m.id},
                      {"at_seq", m.at_seq},
                      {"prompt_tokens", m.why.prompt_tokens},
                      {"matched_tokens", m.matched_tokens},
                      {"divergence", m.why.divergence},
                      {"realigned", m.why.realigned},
                      {"prompt_span", m.why.prompt_span},
                      {"cached_span", m.why.cached_span},
                      {"prompt_span_text", text(m.why.prompt_span)},
                      {"cached_span_text", text(m.why.cached_span)},
                      {"run_after", m.why.run_after},
                      {"would_reuse", m.why.would_reuse}});
  }
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings) {
    findings.push_back({{"position", f.position},
                        {"before_text", text(f.before)},
                        {"example_span", f.example_span},
                        {"example_span_text", text(f.example_span)},
                        {"other_span_text", text(f.other_span)},
                        {"shared_after_tokens", f.shared_after.size()},
                        {"misses", f.misses},
                        {"requests_moved", f.requests_moved},
                        {"mean_span_tokens", f.mean_span_tokens},
                        {"sim_hit_tokens_before", f.sim_hit_tokens_before},
                        {"sim_hit_tokens_after", f.sim_hit_tokens_after},
                        {"tokens_saved", f.tokens_saved},
                        {"hit_rate_before", f.hit_rate_before},
                        {"hit_rate_after", f.hit_rate_after}});
  }
  nlohmann::json meta(r.summary.meta);
  return {{"meta", meta},
          {"events", r.summary.events},
          {"duration_ms", r.summary.duration_ms},
          {"requests", r.requests},
          {"finished", r.finished},
          {"prompt_tokens", r.prompt_tokens},
          {"matched_tokens", r.matched_tokens},
          // null: nothing to measure a hit rate on (no prompt was recorded)
          {"hit_rate", r.prompt_tokens > 0 ? nlohmann::json(r.hit_rate) : nlohmann::json()},
          // null: the pool size is unknown (a recording of KV events)
          {"total_pages", recording::is_block_recording(r.summary)
                              ? nlohmann::json()
                              : nlohmann::json(r.summary.total_pages)},
          {"sim_hit_tokens", r.sim_hit_tokens},
          {"misses", misses},
          {"findings", findings}};
}

void print_text(const std::string& path, const CacheReport& r, const Text& text,
                size_t max_misses) {
  auto meta = [&](const char* k) {
    auto it = r.summary.meta.find(k);
    return it == r.summary.meta.end() ? std::string("unknown") : it->second;
  };
  // KV events carry blocks only: no pool size, model or requests.
  const bool blocks = recording::is_block_recording(r.summary);
  const std::string pool =
      blocks ? "pool size unknown" : std::to_string(r.summary.total_pages) + " pages";
  std::printf(
      "recording %s: %s, model %s, cache %s (page %d, %s), %lld requests, %llu events over "
      "%.1f s\n",
      path.c_str(), meta("source").c_str(), meta("model").c_str(), meta("policy").c_str(),
      r.summary.page_size, pool.c_str(), (long long)r.requests,
      (unsigned long long)r.summary.events, r.summary.duration_ms / 1000);
  if (r.summary.meta.count("stopped")) std::printf("note: %s\n", meta("stopped").c_str());
  if (recording::is_redacted(r.summary.meta))
    std::printf("note: a redacted recording (token ids hashed): spans show as lengths\n");
  if (r.prompt_tokens > 0) {
    std::printf(
        "hit rate %.1f%%: %lld of %lld prompt tokens from the cache (%lld finished requests)\n",
        100 * r.hit_rate, (long long)r.matched_tokens, (long long)r.prompt_tokens,
        (long long)r.finished);
  } else {
    std::printf("hit rate n/a: %s\n", blocks
                                          ? "KV events carry no requests, so no prompt was recorded"
                                          : "no finished request in the recording");
  }
  std::printf("\n%zu requests matched less than their prompt", r.misses.size());
  std::printf(r.misses.size() > max_misses ? " (the %zu that lost most shown):\n" : ":\n",
              max_misses);
  std::vector<const recording::RequestMiss*> worst;
  for (const auto& m : r.misses) worst.push_back(&m);
  std::stable_sort(worst.begin(), worst.end(), [](auto* a, auto* b) {
    return a->why.would_reuse - a->matched_tokens > b->why.would_reuse - b->matched_tokens;
  });
  for (size_t i = 0; i < worst.size() && i < max_misses; ++i) {
    const auto& m = *worst[i];
    std::printf(
        "  request %llu (tree before event %llu): matched %lld of %lld, diverges at token %lld\n",
        (unsigned long long)m.id, (unsigned long long)m.at_seq, (long long)m.matched_tokens,
        (long long)m.why.prompt_tokens, (long long)m.why.divergence);
    if (!m.why.realigned) {
      std::printf("    nothing cached continues this prompt (new content)\n");
      continue;
    }
    std::printf("    prompt has \"%s\" where the cache has \"%s\"\n",
                text(m.why.prompt_span).c_str(), text(m.why.cached_span).c_str());
    std::printf(
        "    then %lld tokens agree again: %lld of %lld tokens reusable without the difference\n",
        (long long)m.why.run_after, (long long)m.why.would_reuse, (long long)m.why.prompt_tokens);
  }
  std::printf("\nprompt layout:\n");
  if (r.findings.empty()) std::printf("  no varying span found in front of a shared part\n");
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const auto& f = r.findings[i];
    std::printf(
        "  %zu. tokens from %lld vary between %lld prompts that share the next %zu tokens\n", i + 1,
        (long long)f.position, (long long)f.misses, f.shared_after.size());
    std::printf("     after \"...%s\": \"%s\" (elsewhere \"%s\"), %.1f tokens on average\n",
                text(f.before).c_str(), text(f.example_span).c_str(), text(f.other_span).c_str(),
                f.mean_span_tokens);
    std::printf(
        "     moving it after the shared part: +%lld cached tokens, hit rate %.1f%% -> %.1f%% "
        "(what-if over %lld rewritten requests)\n",
        (long long)f.tokens_saved, 100 * f.hit_rate_before, 100 * f.hit_rate_after,
        (long long)f.requests_moved);
  }
}

}  // namespace

Command add_cache_report_command(CLI::App& root) {
  struct Opts {
    std::string path, model;
    bool json = false;
    size_t max_misses = 10;
    int64_t min_shared = 16;
  };
  auto o = std::make_shared<Opts>();
  auto* app = root.add_subcommand("cache-report", "Explain a recording's misses and prompt layout");
  app->add_option("recording", o->path, "a recording (--record FILE)")->required();
  app->add_flag("--json", o->json, "one JSON object");
  app->add_option("--model", o->model, "GGUF model whose tokenizer shows spans as text");
  app->add_option("--misses", o->max_misses, "misses listed in the text report (default 10)");
  app->add_option("--min-shared", o->min_shared,
                  "shared tokens after a span to report it (default 16)")
      ->check(CLI::PositiveNumber);
  return {app, [o] {
            auto rec = recording::Recording::open(o->path);
            if (!rec.ok()) return fail(rec.status());
            const std::map<std::string, std::string>& meta = (*rec)->summary().meta;
            Text text;
            text.redacted = recording::is_redacted(meta);
            if (text.redacted && !o->model.empty())
              return fail(
                  "the recording is redacted (token ids hashed): --model cannot show "
                  "its text, leave it out");
            if (!text.redacted) {
              text.engine = open_text_engine(o->model, meta);
              if (!o->model.empty() && !text.engine) return 1;  // the error is printed
            }
            recording::ReportOptions ro;
            ro.min_shared = o->min_shared;
            // The template's closing never counts as agreeing again: the
            // recording says how long it is, else the text model's template.
            if (text.engine)
              ro.miss.closing_tokens = recording::template_closing_tokens(*text.engine);
            auto rep = recording::make_cache_report(**rec, ro);
            if (!rep.ok()) return fail(rep.status());
            if (o->json)
              std::printf("%s\n", to_json(rep.value(), text).dump(2).c_str());
            else
              print_text(o->path, rep.value(), text, o->max_misses);
            return 0;
          }};
}

}  // namespace rc::cli
