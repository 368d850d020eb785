// `radixchat-cli tokenize`: the token ids of a text as a JSON array
// (docs/architecture.md section 18). Only the vocabulary is read, so any GGUF with a vocabulary
// (sentencepiece or byte-level BPE) works, including vocabulary-only files.
// The text is encoded as a user's would be: control-token spellings such as
// <|im_end|> stay plain text unless --special.
#include <cstdio>

#include "commands.h"
#include "radixchat/model-tools.h"

namespace rc::cli {

Command add_tokenize_command(CLI::App& root) {
  struct Opts {
    std::string model, text;
    bool add_bos = false, special = false;
  };
  auto o = std::make_shared<Opts>();
  auto* app = root.add_subcommand("tokenize", "Print the token ids of a text as a JSON array");
  app->add_option("--model", o->model, "GGUF or tokenizer.model (default: the bundled model)");
  app->add_option("--text", o->text, "text to tokenize")->required();
  app->add_flag("--add-bos", o->add_bos, "put the BOS id first");
  app->add_flag("--special", o->special,
                "turn control-token spellings such as <s> or <|im_end|> into their ids");
  return {app, [o] {
            Result<std::vector<int32_t>> ids =
                tokenize_with_model(o->model, o->text, o->add_bos, o->special);
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
