// radixchat-cli: the engine headless. The command-line contract is fixed by
// docs/architecture.md section 18; scripts depend on it.
#include <cstdio>
#include <vector>

#include "commands.h"
#include "parse-errors.h"

namespace rc::cli {

int fail(const std::string& what) {
  std::fprintf(stderr, "radixchat-cli: %s\n", what.c_str());
  return 1;
}

int fail(const Status& status) { return fail(status.to_string()); }

std::string setting_type_name(const std::vector<std::string_view>& names) {
  std::string out = "TEXT:{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
  }
  return out + "}";
}

}  // namespace rc::cli

int main(int argc, char** argv) {
  using namespace rc::cli;
  CLI::App root{"RadixChat: local LLM chat over a radix-tree KV cache (headless tools)",
                "radixchat-cli"};
  root.set_version_flag("--version", std::string("radixchat-cli ") + RADIXCHAT_VERSION);
  root.require_subcommand(1);

  std::vector<Command> commands = {
      add_info_command(root),
      add_cache_bench_command(root),
      add_cache_clear_command(root),
      add_cache_demo_command(root),
      add_generate_command(root),
      add_chat_command(root),
      add_logits_command(root),
      add_model_bench_command(root),
      add_bench_command(root),
      add_serve_command(root),
      add_tokenize_command(root),
      add_gguf_info_command(root),
      add_cache_watch_command(root),
      add_cache_report_command(root),
      add_cache_export_command(root),
      add_kv_events_keygen_command(root),
      add_docs_command(root),
  };

  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return root.exit(e);
  } catch (const CLI::ParseError& e) {
    // One clear line, never a usage dump: scripts read stderr.
    return fail(explain_parse_error(e, root, std::vector<std::string>(argv + 1, argv + argc)));
  }

  for (const Command& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return fail("no command given (see --help)");
}
