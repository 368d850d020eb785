// `radixchat-cli cache-clear --kv-disk DIR|default` and/or `--kv-redis URL
// [--kv-redis-tenant T]`: removes every block that tier holds for this
// installation (every model's) or for that tenant, and says how many.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "radixchat/tier-clear.h"

namespace rc::cli {

namespace {

struct CacheClearOptions {
  std::string disk;
  std::string redis;
  std::string tenant = "default";
};

}  // namespace

Command add_cache_clear_command(CLI::App& root) {
  auto o = std::make_shared<CacheClearOptions>();
  auto* app = root.add_subcommand(
      "cache-clear",
      "Remove every KV block a cache tier holds: the disk tier's folder (every model's blocks) "
      "and/or a Redis tenant's values. Quit the engines using the folder first.");
  app->add_option("--kv-disk", o->disk, "the disk tier's folder, or 'default'");
  app->add_option("--kv-redis", o->redis, "redis://[:password@]host:port[/db]");
  app->add_option("--kv-redis-tenant", o->tenant, "the tenant to clear (default: default)");
  return {app, [o] {
            if (o->disk.empty() && o->redis.empty())
              return fail("cache-clear needs --kv-disk DIR|default or --kv-redis URL");
            if (!o->disk.empty()) {
              Result<int64_t> n = clear_disk_tier(o->disk);
              if (!n.ok()) return fail(n.status());
              std::printf("disk tier %s: %lld blocks removed\n", o->disk.c_str(),
                          static_cast<long long>(n.value()));
            }
            if (!o->redis.empty()) {
              Result<int64_t> n = clear_redis_tenant(o->redis, o->tenant);
              if (!n.ok()) return fail(n.status());
              std::printf("Redis tenant %s: %lld blocks removed\n", o->tenant.c_str(),
                          static_cast<long long>(n.value()));
            }
            return 0;
          }};
}

}  // namespace rc::cli
