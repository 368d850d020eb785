// Flags shared by every command that runs the model (docs/architecture.md section 18):
// --model (default: the bundled model), --backend, --threads, --cache,
// --evict, --ctx, --kv-tokens, --kv-type, --speculate and the cache tiers (--kv-host-size,
// --kv-disk, --kv-disk-size, --kv-redis, --kv-redis-tenant, --kv-redis-password-file,
// --kv-redis-ttl and the sealing key files). Registers them on a subcommand and
// builds the EngineConfig from what the user gave.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "commands.h"
#include "radixchat/engine.h"

namespace rc::cli {

// --kv-redis-password-file's check: reads the file's first line into
// $RADIXCHAT_REDIS_PASSWORD, where the Redis tier looks for a password the
// URL lacks (engine/tiers/redis-url.h). "" when done, else why not.
std::string load_redis_password(std::string& path);

struct EngineOptions {
  EngineConfig config;
  std::string redis_password_file;

  void add_to(CLI::App& app) {
    app.add_option("--model", config.model_path, "GGUF model file (default: the bundled model)");
    add_setting(app, "--backend", config.backend, parse_backend_setting, "auto, cpu or cuda");
    app.add_option("--threads", config.n_threads, "CPU threads (default: all cores)")
        ->check(CLI::NonNegativeNumber);
    add_setting(app, "--cache", config.cache, parse_cache_setting,
                "radix, radix-page16, hash16 or off");
    add_setting(app, "--evict", config.eviction, parse_eviction_setting,
                "which cached leaf goes first when the KV pool is full: gdsf (the least "
                "shared, then the least recent; the default) or lru (the least recent)");
    app.add_option("--ctx", config.context_length, "context length (default: the model's)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--kv-tokens", config.kv_pool_tokens, "KV pool size in tokens")
        ->check(CLI::NonNegativeNumber);
    add_setting(app, "--kv-type", config.kv_type, parse_kv_type,
                "KV pool element type: f16 (default), bf16 or f32 (twice the bytes per token)");
    add_setting(app, "--speculate", config.speculate, parse_speculate_setting,
                "drafted decoding: tree drafts tokens from the cache tree and the prompt and "
                "verifies them in one step (same tokens as off; the default), off decodes one "
                "at a time");
    app.add_option("--kv-host-size", config.kv_host_bytes,
                   "host-memory cache tier below the pool, in bytes (2G, 512M; default: none)")
        ->transform(CLI::AsSizeValue(false));
    add_stored_tier_flags_to(app);
    app.add_option("--chat-template", config.chat_template,
                   "radixchat, llama2, zephyr, chatml, llama3, llama3.1, qwen3, mistral, "
                   "mistral-v3, deepseek-r1, gemma or phi3 (default: recognised from the "
                   "model's tokenizer.chat_template)");
  }

  // The tiers that outlive a process, disk and Redis, with their keys: also
  // on `docs rm`, which purges a removed document's blocks from them.
  void add_stored_tier_flags_to(CLI::App& app) {
    app.add_option("--kv-disk", config.kv_disk,
                   "disk cache tier folder, kept across restarts ('default': "
                   "$XDG_CACHE_HOME/radixchat/kv; default: none)");
    app.add_option("--kv-disk-size", config.kv_disk_bytes,
                   "the disk tier's budget in bytes (2G, 512M; default 2G)")
        ->transform(CLI::AsSizeValue(false));
    app.add_option("--kv-redis", config.kv_redis,
                   "shared Redis cache tier: redis://host:port[/db] (default: none); the "
                   "password from $RADIXCHAT_REDIS_PASSWORD or --kv-redis-password-file");
    app.add_option("--kv-redis-password-file", redis_password_file,
                   "read the Redis password from this file (first line), not the command line "
                   "that ps shows")
        ->check(CLI::Validator(load_redis_password, "FILE"))
        ->needs("--kv-redis");
    app.add_option("--kv-redis-tenant", config.kv_redis_tenant,
                   "namespace of this engine's blocks in a shared Redis (default: default)");
    app.add_option("--kv-redis-ttl", config.kv_redis_ttl_seconds,
                   "seconds a block stays in Redis after it is written (0: until Redis evicts "
                   "it; default 604800, a week)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--kv-disk-key-file", config.kv_disk_key_file,
                   "the key that seals the disk tier's blocks, 64 hex digits, made on first use "
                   "(default: $XDG_DATA_HOME/radixchat/kv-disk.key)");
    app.add_option("--kv-redis-key-file", config.kv_redis_key_file,
                   "the tenant's key that seals its Redis blocks, 64 hex digits, made on first "
                   "use; copy it to every machine of the tenant (default: RADIXCHAT_REDIS_KEY, "
                   "else $XDG_DATA_HOME/radixchat/redis-TENANT.key)");
  }
};

// ", 768 loaded from the tiers" (or ", 768 held by the tiers, recomputed")
// for a request the cache tiers served; "" otherwise.
std::string tier_note(const RequestMetrics& m);

// One line on stderr per cache tier that is not up (down, refused, failing
// writes: the reason) or that refused blocks (corrupt, moved or forged, so
// recomputed). Nothing when all is well.
void report_tier_trouble(const Engine& engine);

// Creates the engine, or prints one line on stderr and returns nullptr.
// When the model's chat template was not recognised, says so on stderr.
std::unique_ptr<Engine> open_engine(const EngineConfig& config);

}  // namespace rc::cli
