// `radixchat-cli kv-events-keygen --out FILE`: a CURVE key pair for
// encrypted KV events (app/kv-events/kv-security.h). FILE holds the secret
// key (0600) for `serve --kv-events-curve-secret FILE`; FILE.pub the public
// key for `cache-watch --kv-events-curve-server-key FILE.pub` or the panel's
// Attach dialog. The public key is also printed on stdout.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "kv-security.h"

namespace rc::cli {

Command add_kv_events_keygen_command(CLI::App& root) {
  auto out = std::make_shared<std::string>();
  auto* app = root.add_subcommand(
      "kv-events-keygen",
      "Make a CURVE key pair for encrypted KV events: --out FILE gets the secret key (0600, for "
      "serve --kv-events-curve-secret FILE), FILE.pub the public key (for cache-watch "
      "--kv-events-curve-server-key FILE.pub). Both are text: 'public-key = ' and "
      "'secret-key = ' lines of 40 Z85 characters, as zmq_curve_keypair makes them.");
  app->add_option("--out", *out, "the secret key file to create (FILE.pub is created too)")
      ->required();
  return {app, [out] {
            auto keys = kv_events::generate_curve_keypair();
            if (!keys.ok()) return fail(keys.status());
            if (Status s = kv_events::write_curve_key_files(*out, keys.value()); !s.ok())
              return fail(s);
            std::printf("%s\n", keys->public_key.c_str());
            std::fprintf(stderr, "radixchat-cli: secret key in %s, public key in %s.pub\n",
                         out->c_str(), out->c_str());
            return 0;
          }};
}

}  // namespace rc::cli
