// `radixchat-cli info`: version, build options, the CUDA plugin and the
// backend that would run (radixchat/backend-probe.h says how it is chosen).
#include <cstdio>

#include "commands.h"
#include "radixchat/backend-probe.h"
#include "radixchat/engine-config.h"
#include "radixchat/model-tools.h"

namespace rc::cli {

Command add_info_command(CLI::App& root) {
  auto* app = root.add_subcommand("info", "Print the version, build options and chosen backend");
  auto backend = std::make_shared<BackendSetting>(BackendSetting::automatic);
  add_setting(*app, "--backend", *backend, parse_backend_setting, "auto, cpu or cuda");
  return {app, [backend] {
            const BackendProbe p = probe_backend(*backend);
            std::printf("radixchat-cli %s\n", RADIXCHAT_VERSION);
            std::printf("cuda backend compiled in: %s\n", p.cuda_built ? "yes" : "no");
            std::printf("cuda plugin: %s\n", p.cuda_plugin.c_str());
            std::printf("backend: %s — %s (%s)\n", p.backend.c_str(), p.device.c_str(),
                        p.reason.c_str());
            std::printf("bundled model: %s\n", bundled_model_path().c_str());
            return 0;
          }};
}

}  // namespace rc::cli
