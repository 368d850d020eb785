// `radixchat-cli model-bench --model PATH [--model PATH ...] --threads N
// --prompt N --decode N [--repeats N] [--json]`: prefill and decode tokens/s of the CPU
// runtime per file, like llama-bench's pp/tg, with the memory bandwidth
// decode can reach and the decode roofline measured in the same run
// (docs/architecture.md section 18; what is measured: radixchat/model-bench.h).
//
// --json prints one JSON object per file, one per line, with at least
// model, type, threads, prompt_tokens, prefill_tok_s, decode_tok_s.
// --repeats N (default 3): timed runs after an untimed warm-up, best kept
// ("repeats" and "statistic": "best" in the JSON).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <thread>

#include "commands.h"
#include "radixchat/model-bench.h"

namespace rc::cli {

namespace {

struct ModelBenchOptions {
  std::vector<std::string> models;
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  int prompt = 512;
  int decode = 64;
  KvType kv_type = KvType::f16;
  int repeats = 3;
  bool json = false;
};

nlohmann::json to_json(const ModelBenchResult& r) {
  return {{"model", r.model},
          {"type", r.type},
          {"threads", r.threads},
          {"prompt_tokens", r.prompt_tokens},
          {"decode_tokens", r.decode_tokens},
          {"repeats", r.repeats},
          {"statistic", "best"},
          {"prefill_tok_s", r.prefill_tok_s},
          {"decode_tok_s", r.decode_tok_s},
          {"weight_bytes", r.weight_bytes},
          {"weights", r.weights},
          {"bytes_per_token", r.bytes_per_token},
          {"interleaved_decode_tok_s", r.interleaved_decode_tok_s},
          {"bandwidth_gbs", r.bandwidth_gbs},
          {"decode_gbs", r.decode_gbs},
          {"roofline_tok_s", r.roofline_tok_s},
          {"decode_fraction", r.decode_fraction}};
}

void print_header() {
  std::printf("%-28s %-5s %8s %3s %11s %10s %9s %10s %10s %8s %s\n", "model", "type", "MB", "thr",
              "prefill t/s", "decode t/s", "MB/token", "decode GB/s", "probe GB/s", "of roof",
              "weights");
}

void print_row(const ModelBenchResult& r) {
  std::printf("%-28s %-5s %8.0f %3d %11.1f %10.2f %9.1f %10.1f %10.1f %7.1f%% %s\n",
              r.model.c_str(), r.type.c_str(), double(r.weight_bytes) / 1e6, r.threads,
              r.prefill_tok_s, r.decode_tok_s, r.bytes_per_token / 1e6, r.decode_gbs,
              r.bandwidth_gbs, 100.0 * r.decode_fraction, r.weights.c_str());
  if (r.decode_fraction > 1.05) {
    std::printf(
        "  note: decode read faster than the probe; the bandwidth figure is too low on "
        "this run (machine load?)\n");
  }
}

int run_model_bench(const ModelBenchOptions& o) {
  bool header = o.json;  // the table header goes out with the first row
  for (const std::string& path : o.models) {
    ModelBenchConfig cfg;
    cfg.model_path = path;
    cfg.n_threads = o.threads;
    cfg.prompt_tokens = o.prompt;
    cfg.decode_tokens = o.decode;
    cfg.kv_type = o.kv_type;
    cfg.repeats = o.repeats;
    Result<ModelBenchResult> r = bench_model(cfg);
    if (!r.ok()) return fail(path + ": " + r.status().to_string());
    if (!header) {
      std::printf(
          "CPU, %d threads, prompt %d, decode %d, KV %s, best of %d runs after a warm-up; "
          "decode GB/s and probe GB/s: %d more runs, each token followed by one read of the "
          "model's weights by %d threads (the best run, the fastest read)\n\n",
          o.threads, o.prompt, o.decode, setting_name(o.kv_type), o.repeats, o.repeats, o.threads);
      print_header();
      header = true;
    }
    if (o.json) {
      std::printf("%s\n", to_json(r.value()).dump().c_str());
    } else {
      print_row(r.value());
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

Command add_model_bench_command(CLI::App& root) {
  auto o = std::make_shared<ModelBenchOptions>();
  auto* app = root.add_subcommand(
      "model-bench", "Prefill/decode tokens/s per GGUF file, with the decode roofline");
  app->add_option("--model", o->models, "GGUF file (repeat for several)")->required();
  app->add_option("--threads", o->threads, "CPU threads (default: all cores)")
      ->check(CLI::PositiveNumber);
  app->add_option("--prompt", o->prompt, "prompt tokens (prefill)")->check(CLI::PositiveNumber);
  app->add_option("--decode", o->decode, "decoded tokens")->check(CLI::PositiveNumber);
  add_setting(*app, "--kv-type", o->kv_type, parse_kv_type,
              "KV pool element type: f16 (default), bf16 or f32");
  app->add_option("--repeats", o->repeats,
                  "timed runs per file after an untimed warm-up; the best is reported (default 3)")
      ->check(CLI::PositiveNumber);
  app->add_flag("--json", o->json, "one JSON object per file");
  return {app, [o] { return run_model_bench(*o); }};
}

}  // namespace rc::cli
