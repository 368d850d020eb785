// How an Engine is set up (docs/architecture.md section 12): EngineConfig
// and the enums of its named settings. A setting's name (a CLI flag's
// value, a saved GUI setting) is parsed once, where it enters the program,
// by the one parse function of its enum, so a bad value reads the same
// everywhere; the engine itself reads only enums.
//
// Thread safety: plain data and pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/eviction.h"
#include "radixchat/status.h"

namespace rc {

// Which compute backend runs the model: automatic (CUDA when a device
// answers, else the CPU), or one asked for by name.
enum class BackendSetting { automatic, cpu, cuda };
// The KV cache's policy and page size (docs/architecture.md section 4).
enum class CacheSetting { radix, radix_page16, hash16, off };
// The KV pool's element type.
enum class KvType { f16, bf16, f32 };
// Drafted decoding (docs/architecture.md section 20).
enum class SpeculateSetting { off, tree };

// Each setting's name, as the CLI spells it: "auto", "radix-page16", "bf16",
// "tree", ...
const char* setting_name(BackendSetting s);
const char* setting_name(CacheSetting s);
const char* setting_name(KvType s);
const char* setting_name(SpeculateSetting s);
const char* setting_name(Eviction s);

// Every name of E, in order: setting_names<CacheSetting>() is {"radix",
// "radix-page16", "hash16", "off"}.
template <class E>
std::vector<std::string_view> setting_names();
template <>
std::vector<std::string_view> setting_names<BackendSetting>();
template <>
std::vector<std::string_view> setting_names<CacheSetting>();
template <>
std::vector<std::string_view> setting_names<KvType>();
template <>
std::vector<std::string_view> setting_names<SpeculateSetting>();
template <>
std::vector<std::string_view> setting_names<Eviction>();

// The inverse of setting_name. invalid_argument, naming the value and every
// accepted spelling ("unknown cache 'x' (expected radix, radix-page16,
// hash16 or off)"), for anything else.
Result<BackendSetting> parse_backend_setting(std::string_view name);
Result<CacheSetting> parse_cache_setting(std::string_view name);
Result<KvType> parse_kv_type(std::string_view name);
Result<SpeculateSetting> parse_speculate_setting(std::string_view name);
Result<Eviction> parse_eviction_setting(std::string_view name);

struct EngineConfig {
  std::string model_path;  // empty: the bundled model
  BackendSetting backend = BackendSetting::automatic;
  int n_threads = 0;  // 0: all cores
  CacheSetting cache = CacheSetting::radix;
  // Which cached leaf the radix cache evicts first (radixchat/cache.h):
  // gdsf keeps what many requests shared, the documents of a library
  // above all; it kept more of the rag workload than lru and did no worse
  // on the others (docs/performance.md).
  Eviction eviction = Eviction::gdsf;
  int64_t kv_pool_tokens = 0;    // 0: 8 x the model's context, at least 16k tokens
                                 //    (CPU: at most 1 GiB of KV)
  KvType kv_type = KvType::f16;  // KV pool elements (f32: twice the bytes per token,
                                 // so half the tokens in 1 GiB)
  int context_length = 0;        // 0: the model's trained context
  int prefill_chunk = 256;       // tokens of one prompt per step (chunked prefill)
  int max_batch_tokens = 512;    // tokens of one forward pass, all requests together
  int max_running = 16;          // requests decoding at once
  int max_queue_age_steps = 64;  // cache-aware ordering never delays a request longer
  // Drafted decoding: tree drafts tokens from the cache tree and the
  // prompt and verifies them in one forward pass (the same tokens as off,
  // faster where replies repeat what the engine has seen, and only where a
  // draft is expected to pay: docs/architecture.md section 20); off
  // decodes one token per step.
  SpeculateSetting speculate = SpeculateSetting::tree;
  std::string chat_template;  // empty: chosen from the model's metadata
  // Cache tiers below the pool (docs/architecture.md section 8). KV of whole
  // blocks of kv_block_tokens tokens is written through to each tier and
  // loaded back when a prompt's prefix left the pool (or the process).
  int64_t kv_host_bytes = 0;  // host-memory tier; 0: none
  std::string kv_disk;        // disk tier folder; "": none; "default":
                              // $XDG_CACHE_HOME/radixchat/kv
  int64_t kv_disk_bytes = int64_t(2) << 30;
  std::string kv_redis;  // redis://[:password@]host:port[/db]; "": none
  std::string kv_redis_tenant = "default";
  int64_t kv_redis_ttl_seconds = int64_t(7) * 24 * 3600;  // expiry of Redis values; 0: none
  // The keys that seal the disk and Redis tiers' blocks (docs/architecture.md
  // section 8): files of 64 hex digits, 0600, made on first use. "": the
  // defaults, $XDG_DATA_HOME/radixchat/kv-disk.key, and for Redis the
  // RADIXCHAT_REDIS_KEY variable when set, else
  // $XDG_DATA_HOME/radixchat/redis-<tenant>.key (copy it to every machine
  // that shares the tenant).
  std::string kv_disk_key_file;
  std::string kv_redis_key_file;
  int kv_block_tokens = 64;
  // CPU: run on a copy of the weights in huge pages where the backend
  // prefers it (faster decode, the same resident memory: the file
  // mapping's pages go back to the kernel). False keeps the mapping, whose
  // pages other engines on the same file share (the panel's lessons).
  bool weight_copies = true;
  // Called on the creating thread while create() loads, with the fraction
  // done in [0, 1]; returning false cancels the load (create() then fails
  // with StatusCode::cancelled). Loading reads every weight page once, so
  // the first reply does not pay for page faults.
  std::function<bool(float)> load_progress;
};

}  // namespace rc
