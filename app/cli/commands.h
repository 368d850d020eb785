// radixchat-cli subcommands. Each lives in its own cmd-*.cpp file and
// registers itself on the root CLI11 app; main() parses, then runs the one
// subcommand the user named. A command returns the process exit code and
// reports failures as one line on stderr via fail().
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "radixchat/status.h"

namespace rc::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Prints "radixchat-cli: <what>" on stderr and returns the failure exit code.
int fail(const std::string& what);
int fail(const Status& status);

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
