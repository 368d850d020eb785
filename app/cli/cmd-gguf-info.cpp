// `radixchat-cli gguf-info`: what a GGUF file holds and whether RadixChat can
// run it: architecture, hyper-parameters, tokenizer, chat template, metadata
// and tensors.
#include <cstdio>

#include "commands.h"
#include "radixchat/model-tools.h"

namespace rc::cli {

Command add_gguf_info_command(CLI::App& root) {
  auto model = std::make_shared<std::string>();
  auto* app = root.add_subcommand("gguf-info", "Describe a GGUF file (architecture, tensors, ...)");
  app->add_option("--model", *model, "GGUF file (default: the bundled model)");
  return {app, [model] {
            Result<std::string> text =
                describe_gguf(model->empty() ? bundled_model_path() : *model);
            if (!text.ok()) return fail(text.status());
            std::fputs(text->c_str(), stdout);
            return 0;
          }};
}

}  // namespace rc::cli
