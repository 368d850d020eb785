// Decode time per token with and without a response_format, through the
// Engine, as figures (not a test): what the mask costs a whole decode step
// on a real model and vocabulary.
//
// For each schema, the same requests run one at a time twice, interleaved
// (alternating which goes first):
// with the schema as response_format (the reply ends with its JSON), and
// without one (ignore_eos, so every reply runs to max_tokens). Both with
// the same sampling: greedy by default, so the sampler's own cost (at a
// temperature above 0 without top-k it sorts the whole vocabulary, which
// masked rows make cheaper) does not hide the mask's. Reported per mode: the mean
// inter-token latency (RequestMetrics::itl_ms_mean, weighted by tokens) and
// the tokens generated; then the overhead of the response_format.
//
// Schemas: the one `radixchat-cli bench --workload structured` sends
// (app/cli/bench-workloads.cpp), and one with pattern, format and maxLength
// strings. The model should have a large vocabulary, e.g. a random-weight
// model of Qwen3-0.6B's shape with Qwen3's vocabulary from the BPE oracle
// fixture (ctest -R bpe_oracle_setup):
//   make-random-gguf --arch qwen3 --dim 1024 --layers 28 --heads 16 --kv-heads 8
//     --head-dim 128 --ffn 3072 --vocab 151936 --ctx 4096 --type q8_0 --tied
//     --vocab-from BUILD/bpe-oracle/qwen3-vocab.gguf --chat-template '' --out M.gguf
// usage: structured-decode-bench M.gguf [--requests N] [--max-tokens N] [--threads N]
//                                [--temperature T]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "radixchat/engine.h"

namespace {

using namespace rc;

struct Schema {
  const char* name;
  const char* json;
};

const Schema kSchemas[] = {
    {"bench --workload structured",
     R"({"type":"object","properties":{)"
     R"("topic":{"enum":["travel","weather","food","science","sport","other"]},)"
     R"("date":{"type":"string","format":"date"},)"
     R"("people":{"type":"array","items":{"type":"string"},"maxItems":3},)"
     R"("sentiment":{"enum":["positive","neutral","negative"]},)"
     R"("score":{"type":"integer"},"urgent":{"type":"boolean"}},)"
     R"("required":["topic","date","sentiment","score","urgent"],"additionalProperties":false})"},
    {"patterns, formats, maxLength",
     R"({"type":"object","properties":{"ref":{"type":"string","pattern":"[0-9a-f]{8}"},)"
     R"("code":{"type":"string","pattern":"^[A-Z]{2}-\\d{4}(-[a-z]+)?$"},)"
     R"("user":{"type":"string","pattern":"^\\w+@[a-z]+\\.(com|org)$"},)"
     R"("title":{"type":"string","minLength":3,"maxLength":40},)"
     R"("site":{"type":"string","format":"uri"},"mail":{"type":"string","format":"email"}},)"
     R"("required":["ref","code","user","title","site","mail"]})"},
};

struct Run {
  int tokens = 0;
  double itl_ms_sum = 0;  // itl_ms_mean x (tokens - 1), summed
  int gaps = 0;
  std::string error;
};

Run run_one(Engine& e, const GenerateRequest& req) {
  Run out;
  std::promise<void> done;
  auto id = e.submit(req, [&](const StreamEvent& ev) {
    if (ev.finished) {
      out.tokens = ev.metrics.output_tokens;
      const int gaps = std::max(0, ev.metrics.output_tokens - 1);
      out.itl_ms_sum = ev.metrics.itl_ms_mean * gaps;
      out.gaps = gaps;
      if (ev.reason == FinishReason::error) out.error = ev.error.message();
      done.set_value();
    }
    return true;
  });
  if (!id.ok()) {
    out.error = id.status().message();
    return out;
  }
  done.get_future().wait();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: structured-decode-bench MODEL.gguf [--requests N] [--max-tokens N] "
                 "[--threads N] [--temperature T]\n");
    return 2;
  }
  int requests = 4, max_tokens = 96, threads = 2;
  float temperature = 0.0f;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--requests")) requests = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--max-tokens")) max_tokens = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--temperature")) temperature = std::strtof(argv[i + 1], nullptr);
  }
  EngineConfig cfg;
  cfg.model_path = argv[1];
  cfg.backend = BackendSetting::cpu;
  cfg.n_threads = threads;
  cfg.cache = CacheSetting::off;  // every request computes its prompt: the modes see the same work
  cfg.kv_pool_tokens = 1 << 14;
  auto engine = Engine::create(cfg);
  if (!engine.ok()) {
    std::fprintf(stderr, "structured-decode-bench: %s\n", engine.status().message().c_str());
    return 1;
  }
  for (const Schema& s : kSchemas) {
    Run with, without;
    for (int i = 0; i < requests; ++i) {
      GenerateRequest req;
      req.prompt =
          "Answer with one JSON object that follows this JSON Schema: " + std::string(s.json) +
          "\nRequest " + std::to_string(i) + ":\n";
      req.sampling.temperature = temperature;
      req.sampling.seed = 1000 + i;
      req.max_tokens = max_tokens;
      // Alternate which mode goes first, so drifts in machine load fall on both.
      for (int k = 0; k < 2; ++k) {
        const bool constrained = (k == 0) == (i % 2 == 0);
        GenerateRequest r = req;
        if (constrained) {
          r.response_format = {OutputFormat::json_schema, s.json};
        } else {
          r.ignore_eos = true;
        }
        const Run one = run_one(*engine.value(), r);
        if (!one.error.empty()) {
          std::fprintf(stderr, "structured-decode-bench: %s\n", one.error.c_str());
          return 1;
        }
        Run& sum = constrained ? with : without;
        sum.tokens += one.tokens;
        sum.itl_ms_sum += one.itl_ms_sum;
        sum.gaps += one.gaps;
      }
    }
    const double itl_with = with.gaps ? with.itl_ms_sum / with.gaps : 0;
    const double itl_without = without.gaps ? without.itl_ms_sum / without.gaps : 0;
    std::printf(
        "%-30s %d requests, max_tokens %d, temperature %.1f | per token: with response_format %.2f "
        "ms (%d tokens), "
        "without %.2f ms (%d tokens) | overhead %+.1f%%\n",
        s.name, requests, max_tokens, temperature, itl_with, with.tokens, itl_without,
        without.tokens, itl_without > 0 ? 100 * (itl_with / itl_without - 1) : 0.0);
  }
  return 0;
}
