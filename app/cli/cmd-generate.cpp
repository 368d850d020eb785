// `radixchat-cli generate`: one completion of a plain-text prompt, streamed
// to stdout. Figures (prompt tokens, cached, TTFT, tok/s) go to stderr so
// stdout stays the generated text.
#include <cstdio>
#include <fstream>
#include <future>
#include <sstream>

#include "commands.h"
#include "document-options.h"
#include "engine-options.h"

namespace rc::cli {

namespace {

struct GenerateOptions {
  EngineOptions engine;
  DocumentOptions documents;
  std::string prompt;
  int max_tokens = 128;
  float temperature = 0.0f;
  float top_p = 1.0f;
  int top_k = 0;
  uint64_t seed = 0;
  bool quiet = false;
  std::string json_schema_file;  // --json-schema: output valid against this schema
  bool json = false;             // --json: output any JSON object
};

int run_generate(const GenerateOptions& o) {
  std::unique_ptr<Engine> engine = open_engine(o.engine.config);
  if (!engine) return 1;
  GenerateRequest req;
  req.prompt = o.prompt;
  std::unique_ptr<library::Library> lib;
  std::vector<std::string> names;
  if (!o.documents.resolve(*engine, lib, names)) return 1;
  PlacedDocuments placed;
  if (lib) {
    auto set = document_set(*lib, names, o.prompt);
    if (!set.ok()) return fail(set.status().message());
    auto p = place_documents(*engine, req, set.value());
    if (!p.ok()) return fail(p.status());
    placed = std::move(p.value());
  }
  req.max_tokens = o.max_tokens;
  req.sampling.temperature = o.temperature;
  req.sampling.top_p = o.top_p;
  req.sampling.top_k = o.top_k;
  req.sampling.seed = o.seed;
  if (o.json) req.response_format.type = OutputFormat::json_object;
  if (!o.json_schema_file.empty()) {
    std::ifstream in(o.json_schema_file, std::ios::binary);
    if (!in) {
      return fail(
          Status(StatusCode::not_found, "cannot read the schema file " + o.json_schema_file));
    }
    std::ostringstream text;
    text << in.rdbuf();
    req.response_format = {OutputFormat::json_schema, text.str()};
  }

  std::promise<StreamEvent> done;
  Result<RequestId> id = engine->submit(req, [&done](const StreamEvent& ev) {
    std::fwrite(ev.text.data(), 1, ev.text.size(), stdout);
    std::fflush(stdout);
    if (ev.finished) done.set_value(ev);
    return true;
  });
  if (!id.ok()) return fail(id.status());
  StreamEvent end = done.get_future().get();
  std::printf("\n");
  std::fflush(stdout);  // the figures go to stderr after the reply
  if (end.reason == FinishReason::error) return fail(end.error);
  if (!o.quiet) {
    const RequestMetrics& m = end.metrics;
    const double decode_s = (m.total_ms - m.ttft_ms) / 1000.0;
    std::fprintf(
        stderr,
        "[%s on %s | prompt %d tokens (%d cached%s)%s | %d tokens | TTFT %.1f ms | %.1f tok/s | "
        "finish: %s]\n",
        engine->model_info().name.c_str(), engine->model_info().device.c_str(), m.prompt_tokens,
        m.cached_tokens, tier_note(m).c_str(), document_note(placed, m).c_str(), m.output_tokens,
        m.ttft_ms, m.output_tokens > 1 && decode_s > 0 ? (m.output_tokens - 1) / decode_s : 0.0,
        finish_reason_name(end.reason));
  }
  report_tier_trouble(*engine);
  return 0;
}

}  // namespace

Command add_generate_command(CLI::App& root) {
  auto o = std::make_shared<GenerateOptions>();
  auto* app = root.add_subcommand("generate", "Complete a plain-text prompt, streamed to stdout");
  o->engine.add_to(*app);
  o->documents.add_to(*app);
  app->add_option("--prompt", o->prompt, "prompt text")->required();
  app->add_option("--max-tokens", o->max_tokens, "most tokens to generate")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--temperature", o->temperature, "0 = greedy")->check(CLI::NonNegativeNumber);
  app->add_option("--top-p", o->top_p, "nucleus sampling mass")->check(CLI::Range(0.0, 1.0));
  app->add_option("--top-k", o->top_k, "0 = off")->check(CLI::NonNegativeNumber);
  app->add_option("--seed", o->seed, "sampling seed");
  app->add_flag("--quiet", o->quiet, "no figures on stderr");
  auto* schema = app->add_option("--json-schema", o->json_schema_file,
                                 "answer with JSON valid against the JSON Schema in this file");
  app->add_flag("--json", o->json, "answer with a JSON object")->excludes(schema);
  return {app, [o] { return run_generate(*o); }};
}

}  // namespace rc::cli
