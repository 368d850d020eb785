// `radixchat-cli logits --tokens 1,2,3 --out FILE`: the logits of the last
// position as n_vocab little-endian float32 (docs/architecture.md section 18). The ids
// are used as given; no BOS is added.
#include <bit>
#include <sstream>
#include <string_view>

#include "commands.h"
#include "engine-options.h"
#include "radixchat/private-files.h"

namespace rc::cli {

namespace {

struct LogitsOptions {
  EngineOptions engine;
  std::string tokens;
  std::string out;
};

Result<std::vector<int32_t>> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const long v = std::stol(item, &used);
      if (used != item.size() || v < 0 || v > INT32_MAX) throw std::invalid_argument(item);
      ids.push_back(static_cast<int32_t>(v));
    } catch (const std::exception&) {
      return Status(StatusCode::invalid_argument, "--tokens: '" + item + "' is not a token id");
    }
  }
  if (ids.empty()) return Status(StatusCode::invalid_argument, "--tokens: no token ids given");
  return ids;
}

int run_logits(const LogitsOptions& o) {
  static_assert(std::endian::native == std::endian::little, "logits files are little-endian");
  Result<std::vector<int32_t>> ids = parse_ids(o.tokens);
  if (!ids.ok()) return fail(ids.status());
  std::unique_ptr<Engine> engine = open_engine(o.engine.config);
  if (!engine) return 1;
  Result<std::vector<float>> logits = engine->last_logits(ids.value());
  if (!logits.ok()) return fail(logits.status());
  // Owner-only, as every file RadixChat writes (radixchat/private-files.h).
  const std::string_view bytes(reinterpret_cast<const char*>(logits->data()),
                               logits->size() * sizeof(float));
  if (Status s = write_private_file(o.out, bytes); !s.ok())
    return fail("cannot write '" + o.out + "': " + s.message());
  return 0;
}

}  // namespace

Command add_logits_command(CLI::App& root) {
  auto o = std::make_shared<LogitsOptions>();
  auto* app = root.add_subcommand("logits", "Write the last position's logits as float32");
  o->engine.add_to(*app);
  app->add_option("--tokens", o->tokens, "comma-separated token ids")->required();
  app->add_option("--out", o->out, "output file")->required();
  return {app, [o] { return run_logits(*o); }};
}

}  // namespace rc::cli
