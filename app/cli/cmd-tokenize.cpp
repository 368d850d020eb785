// `radixchat-cli tokenize`: the token ids of a text as a JSON array (design.md
// section 7). Only the vocabulary is read, so any llama-vocabulary GGUF works,
// including vocabulary-only files.
#include <cstdio>

#include "commands.h"
#include "radixchat/model-tools.h"

namespace rc::cli {

Command add_tokenize_command(CLI::App& root) {
  struct Opts {
    std::string model, text;
    bool add_bos = false, no_special = false;
  };
  auto o = std::make_shared<Opts>();
  auto* app = root.add_subcommand("tokenize", "Print the token ids of a text as a JSON array");
  app->add_option("--model", o->model, "GGUF or tokenizer.model (default: the bundled model)");
  app->add_option("--text", o->text, "text to tokenize")->required();
  app->add_flag("--add-bos", o->add_bos, "put the BOS id first");
  app->add_flag("--no-parse-special", o->no_special,
                "encode special spellings such as <s> or chat markers as plain text");
  return {app, [o] {
            Result<std::vector<int32_t>> ids =
                tokenize_with_model(o->model, o->text, o->add_bos, !o->no_special);
            if (!ids.ok()) return fail(ids.status());
            std::string out = "[";
            for (size_t i = 0; i < ids->size(); ++i) {
              if (i) out += ',';
              out += std::to_string((*ids)[i]);
            }
            out += "]\n";
            std::fputs(out.c_str(), stdout);
            return 0;
          }};
}

}  // namespace rc::cli
