// radixchat-cli subcommands. Each lives in its own cmd-*.cpp file and
// registers itself on the root CLI11 app; main() parses, then runs the one
// subcommand the user named. A command returns the process exit code and
// reports failures as one line on stderr via fail().
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/engine-config.h"
#include "radixchat/status.h"

namespace rc::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Prints "radixchat-cli: <what>" on stderr and returns the failure exit code.
int fail(const std::string& what);
int fail(const Status& status);

// "TEXT:{radix,radix-page16,hash16,off}", as CLI11 names a choice in --help.
std::string setting_type_name(const std::vector<std::string_view>& names);

// A flag whose value names an enum setting (radixchat/engine-config.h): the
// setting's own parse function reads it, so a bad value is refused in the
// same words as everywhere else ("--cache: unknown cache 'x' (expected
// radix, radix-page16, hash16 or off)").
template <class E>
CLI::Option* add_setting(CLI::App& app, const std::string& flag, E& target,
                         Result<E> (*parse)(std::string_view), const std::string& help) {
  return app
      .add_option_function<std::string>(
          flag,
          [&target, parse, flag](const std::string& value) {
            Result<E> setting = parse(value);
            if (!setting.ok()) throw CLI::ValidationError(flag, setting.status().message());
            target = setting.value();
          },
          help)
      ->type_name(setting_type_name(setting_names<E>()));
}

Command add_info_command(CLI::App& root);
Command add_generate_command(CLI::App& root);
Command add_chat_command(CLI::App& root);
Command add_logits_command(CLI::App& root);
Command add_model_bench_command(CLI::App& root);
Command add_bench_command(CLI::App& root);
Command add_cache_bench_command(CLI::App& root);
Command add_cache_clear_command(CLI::App& root);
Command add_cache_demo_command(CLI::App& root);
Command add_serve_command(CLI::App& root);
Command add_tokenize_command(CLI::App& root);
Command add_gguf_info_command(CLI::App& root);
Command add_cache_watch_command(CLI::App& root);
Command add_cache_report_command(CLI::App& root);
Command add_cache_export_command(CLI::App& root);
Command add_kv_events_keygen_command(CLI::App& root);
Command add_docs_command(CLI::App& root);

}  // namespace rc::cli
