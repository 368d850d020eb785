// `radixchat-cli info`: version, build options and the backend that would run.
#include <cstdio>

#include "commands.h"
#include "device-select.h"
#include "radixchat/model-tools.h"

namespace rc::cli {

Command add_info_command(CLI::App& root) {
  auto* app = root.add_subcommand("info", "Print the version, build options and chosen backend");
  auto backend = std::make_shared<std::string>("auto");
  app->add_option("--backend", *backend, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  return {app, [backend] {
            kernels::DeviceChoice d = kernels::select_device(*backend);
            std::printf("radixchat-cli %s\n", RADIXCHAT_VERSION);
            std::printf("cuda backend compiled in: %s\n", kernels::cuda_compiled_in() ? "yes" : "no");
            std::printf("backend: %s — %s (%s)\n",
                        d.kind == kernels::DeviceKind::cuda ? "cuda" : "cpu", d.name.c_str(),
                        d.reason.c_str());
            std::printf("bundled model: %s\n", bundled_model_path().c_str());
            return 0;
          }};
}

}  // namespace rc::cli
