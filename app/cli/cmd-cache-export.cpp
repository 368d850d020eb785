// `radixchat-cli cache-export [RECORDING [--at SEQ] | --url URL [--api-key K]]
// --format svg|png --out FILE`: the cache tree as a picture (docs/architecture.md
// section 18). From a recording at a recorded moment (default: its end), or
// from a live RadixChat server's GET /v1/cache. SVG from recording/tree-svg.h;
// PNG is that SVG rasterized by Qt (recording/tree-png.h, GUI builds only).
// Labels: a recording's tokens through --model's tokenizer (or the bundled
// model's, for a recording made with it), else token ids; a redacted
// recording's, token counts; a server's nodes carry their text. The file is
// written owner-only (it shows cached prompts).
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "commands.h"
#include "radixchat/engine.h"
#include "radixchat/private-files.h"
#include "recording/chain-fold.h"
#include "recording/recording-reader.h"
#include "recording/redaction.h"
#include "recording/tree-svg.h"
#include "server-cache-snapshot.h"
#if RADIXCHAT_HAVE_PNG
#include "recording/tree-png.h"
#endif

namespace rc::cli {

namespace {

using Labeler = std::function<std::string(const std::vector<int32_t>&)>;

struct ExportOptions {
  std::string recording, url, api_key, format, out, model;
  int64_t at = -1;
};

// What to draw: a tree, how to label its nodes, a title.
struct Picture {
  CacheSnapshot tree;
  Labeler label;
  std::string title;
  std::unordered_map<NodeId, size_t> blocks;  // folded runs of KV-event blocks
  std::unique_ptr<Engine> engine;             // owns the tokenizer label uses
  std::map<std::vector<int32_t>, std::string> text;
  int32_t bos = -1;  // the tokenizer's start-of-sequence id, labelled as such
};

Status load_tokenizer(const std::string& model, bool required, Picture& p) {
  EngineConfig cfg;
  cfg.model_path = model;
  cfg.kv_pool_tokens = 1024;  // only the tokenizer is used
  cfg.n_threads = 1;
  auto e = Engine::create(cfg);
  if (!e.ok()) return required ? e.status() : Status();
  p.engine = std::move(e.value());
  Engine* engine = p.engine.get();
  p.label = [engine](const std::vector<int32_t>& t) { return engine->detokenize(t); };
  auto bos = engine->tokenize("", true);
  if (bos.ok() && !bos.value().empty()) p.bos = bos.value().front();
  return {};
}

Status from_recording(const ExportOptions& o, Picture& p) {
  auto rec = recording::Recording::open(o.recording);
  if (!rec.ok()) return rec.status();
  const int64_t end = (*rec)->summary().last_seq + 1;
  const uint64_t seq = uint64_t(o.at >= 0 ? o.at : std::max<int64_t>(end, 0));
  auto tree = (*rec)->tree_at(seq);
  if (!tree.ok()) return tree.status();
  p.tree = std::move(tree.value());
  p.title = o.recording + " at event " + std::to_string(seq);
  if (recording::is_block_recording((*rec)->summary())) {
    // One node per KV-event block: draw runs of single-child blocks as the
    // radix nodes they are, each labelled with its length.
    recording::FoldedTree folded = recording::fold_single_child_chains(p.tree);
    p.title += " (" + std::to_string(p.tree.nodes.size() - 1) + " blocks)";
    p.tree = std::move(folded.tree);
    p.blocks = std::move(folded.blocks);
  }
  auto meta = (*rec)->summary().meta;
  if (recording::is_redacted(meta)) {
    if (!o.model.empty())
      return Status(StatusCode::invalid_argument,
                    "the recording is redacted (token ids hashed): --model cannot label it, "
                    "leave it out");
    p.label = [](const std::vector<int32_t>& t) { return recording::redacted_label(t.size()); };
    return {};
  }
  if (!o.model.empty() || meta["model"] == "radixchat-demo")
    return load_tokenizer(o.model, !o.model.empty(), p);
  return {};
}

Status from_server(const ExportOptions& o, Picture& p) {
  auto live = kv_events::fetch_server_cache(o.url, o.api_key);
  if (!live.ok()) return live.status();
  p.tree = std::move(live->snapshot);
  p.title = "cache of " + live->base_url;
  if (!o.model.empty()) return load_tokenizer(o.model, true, p);
  // The server's text is a function of the tokens, so tokens key it.
  for (const CacheNodeInfo& n : p.tree.nodes) {
    auto t = live->text.find(n.id);
    if (t != live->text.end()) p.text[n.tokens] = t->second;
  }
  if (!p.text.empty())
    p.label = [&p](const std::vector<int32_t>& t) {
      auto it = p.text.find(t);
      return it != p.text.end() ? it->second : std::to_string(t.size()) + " tokens";
    };
  return {};
}

Status check(ExportOptions& o) {
  if (o.recording.empty() == o.url.empty())
    return Status(StatusCode::invalid_argument, "give a RECORDING or --url URL (one of them)");
  if (o.at >= 0 && o.recording.empty())
    return Status(StatusCode::invalid_argument, "--at needs a RECORDING");
  if (o.format.empty()) {
    const auto dot = o.out.rfind('.');
    std::string ext = dot == std::string::npos ? "" : o.out.substr(dot + 1);
    for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (ext != "svg" && ext != "png")
      return Status(StatusCode::invalid_argument,
                    "give --format svg|png (cannot tell it from the name '" + o.out + "')");
    o.format = ext;
  }
#if !RADIXCHAT_HAVE_PNG
  if (o.format == "png")
    return Status(StatusCode::unsupported,
                  "this radixchat-cli was built without Qt (RADIXCHAT_GUI=OFF), so without PNG "
                  "export; use --format svg");
#endif
  return {};
}

Status write_picture(const ExportOptions& o, const Picture& p) {
  recording::SvgOptions so;
  so.title = p.title;
  so.blocks = p.blocks;
  so.bos = p.bos;
  size_t drawn = 0;
  const std::string doc = recording::tree_svg(p.tree, p.label, so, &drawn);
  std::string size;
  if (o.format == "svg") {
    if (Status s = write_private_file(o.out, doc); !s.ok())
      return Status(StatusCode::not_found, "cannot write " + o.out + ": " + s.message());
  } else {
#if RADIXCHAT_HAVE_PNG
    recording::PngInfo info;
    if (Status s = recording::svg_to_png(doc, o.out, {}, &info); !s.ok()) return s;
    size = " (" + std::to_string(info.width) + "x" + std::to_string(info.height) + ")";
#endif
  }
  std::fprintf(stderr, "radixchat-cli: %zu nodes drawn to %s%s\n", drawn, o.out.c_str(),
               size.c_str());
  return {};
}

int run_cache_export(ExportOptions o) {
  if (Status s = check(o); !s.ok()) return fail(s);
  Picture p;
  if (Status s = o.url.empty() ? from_recording(o, p) : from_server(o, p); !s.ok()) return fail(s);
  if (Status s = write_picture(o, p); !s.ok()) return fail(s);
  return 0;
}

}  // namespace

Command add_cache_export_command(CLI::App& root) {
  auto o = std::make_shared<ExportOptions>();
  auto* app = root.add_subcommand(
      "cache-export", "Draw the cache tree (a recording's, or a live server's) as SVG or PNG");
  app->add_option("recording", o->recording, "a recording (--record FILE)");
  app->add_option("--at", o->at, "the moment: after the events before this seq (default: the end)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--url", o->url, "a RadixChat server, http://HOST:PORT (its /v1/cache)");
  app->add_option("--api-key", o->api_key, "the server's API key (with --url)")
      ->envname("RADIXCHAT_API_KEY");
  app->add_option("--format", o->format, "svg or png (default: from --out's extension)")
      ->check(CLI::IsMember({"svg", "png"}));
  app->add_option("--out", o->out, "output file")->required();
  app->add_option("--model", o->model, "GGUF model whose tokenizer labels the nodes");
  return {app, [o] { return run_cache_export(*o); }};
}

}  // namespace rc::cli
