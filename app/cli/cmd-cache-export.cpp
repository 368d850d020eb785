// `radixchat-cli cache-export --recording FILE [--seq N] --svg OUT`: the
// cache tree at a recorded moment (default: the end) as an SVG document
// (recording/tree-svg.h), labels as text with --model (or the bundled
// model when the recording was made with it), else token counts.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "commands.h"
#include "radixchat/engine.h"
#include "recording/recording-reader.h"
#include "recording/tree-svg.h"

namespace rc::cli {

Command add_cache_export_command(CLI::App& root) {
  struct Opts {
    std::string recording, svg, model;
    int64_t seq = -1;
  };
  auto o = std::make_shared<Opts>();
  auto* app = root.add_subcommand("cache-export", "Draw the cache tree of a recording as SVG");
  app->add_option("--recording", o->recording, "a recording (--record FILE)")->required();
  app->add_option("--seq", o->seq, "the moment: after events before this seq (default: the end)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--svg", o->svg, "output file")->required();
  app->add_option("--model", o->model, "GGUF model whose tokenizer labels the nodes");
  return {app, [o] {
            auto rec = recording::Recording::open(o->recording);
            if (!rec.ok()) return fail(rec.status());
            const int64_t end = (*rec)->summary().last_seq + 1;
            const uint64_t seq = uint64_t(o->seq >= 0 ? o->seq : std::max<int64_t>(end, 0));
            auto tree = (*rec)->tree_at(seq);
            if (!tree.ok()) return fail(tree.status());
            std::unique_ptr<Engine> engine;
            auto meta = (*rec)->summary().meta;
            if (!o->model.empty() || meta["model"] == "radixchat-demo") {
              EngineConfig cfg;
              cfg.model_path = o->model;
              cfg.kv_pool_tokens = 1024;  // only the tokenizer is used
              cfg.n_threads = 1;
              auto e = Engine::create(cfg);
              if (!e.ok() && !o->model.empty()) return fail(e.status());
              if (e.ok()) engine = std::move(e.value());
            }
            recording::SvgOptions so;
            so.title = o->recording + " at event " + std::to_string(seq);
            size_t drawn = 0;
            const std::string doc = recording::tree_svg(
                tree.value(),
                engine ? std::function<std::string(const std::vector<int32_t>&)>(
                             [&](const std::vector<int32_t>& t) { return engine->detokenize(t); })
                       : nullptr,
                so, &drawn);
            std::ofstream f(o->svg, std::ios::binary | std::ios::trunc);
            if (!(f << doc) || !f.flush()) return fail("cannot write " + o->svg);
            std::fprintf(stderr, "radixchat-cli: %zu nodes drawn to %s\n", drawn, o->svg.c_str());
            return 0;
          }};
}

}  // namespace rc::cli
