// Engine::create and its steps: loading the model and tokenizer, sizing
// the KV pool, choosing the backend, attaching the tiers and starting the
// engine thread (engine-impl.h has the running service).
#include <algorithm>
#include <filesystem>

#include "cpu/cpu-backends.h"
#include "cuda-plugin.h"
#include "device-select.h"
#include "device-weights.h"
#include "engine-impl.h"
#include "engine-setup.h"
#include "kv-type.h"
#include "model/default-model.h"

namespace rc {

namespace {

using runtime::CacheChoice;
using runtime::EngineImpl;

Status load_cancelled() { return Status(StatusCode::cancelled, "model loading was cancelled"); }

// Logit rows beyond one per running request that drafted steps may use.
constexpr int kDraftLogitRows = runtime::DraftBudget::kMaxTokens + 1;

}  // namespace

Status runtime::EngineImpl::setup_compute(const EngineConfig& config, const CacheChoice& choice,
                                          std::string* note) {
  const model::ModelConfig& mc = model_->config;
  const int max_batch = std::max(config.max_batch_tokens, 1);
  // Drafted decoding verifies several positions of a request per step.
  const bool drafts = config.speculate == SpeculateSetting::tree;
  const int max_rows = std::min(config.max_running + (drafts ? kDraftLogitRows : 0), max_batch);
  int64_t pool_tokens = config.kv_pool_tokens > 0 ? config.kv_pool_tokens
                                                  : default_pool_tokens(context_, bytes_per_token_);
  if (!backend_->host_memory()) {
    // Device memory: the weights and scratch come first, the pool gets at
    // most what is left. The user's --kv-tokens is an upper bound there;
    // without it, the CPU default without its 1 GiB cap.
    const int64_t free = backend_->free_memory();
    const int64_t weights = int64_t(runtime::DeviceWeights::bytes_needed(model_->weights));
    const int64_t left = free - weights - device_reserve_bytes(mc, max_batch, max_rows, free);
    const int64_t fit = std::max<int64_t>(left, 0) / std::max<int64_t>(bytes_per_token_, 1);
    if (config.kv_pool_tokens == 0) pool_tokens = std::max<int64_t>(8LL * context_, 16384);
    if (fit < std::min<int64_t>(pool_tokens, 256)) {
      return Status(StatusCode::internal,
                    "not enough device memory: " + std::to_string(free >> 20) +
                        " MiB free, the weights need " + std::to_string(weights >> 20) + " MiB");
    }
    if (pool_tokens > fit) {
      if (config.kv_pool_tokens > 0) {
        *note = "KV pool reduced to " + std::to_string(fit) + " tokens to fit device memory";
      }
      pool_tokens = fit;
    }
  }
  const int64_t n_pages = (pool_tokens + page_size_ - 1) / page_size_;
  kernels::KvPoolShape shape{mc.n_layers, mc.n_kv_heads, mc.head_dim,
                             page_size_,  n_pages,       kv_type_};
  pool_ = backend_->make_kv_pool(shape);
  if (!pool_) {
    const std::string err = backend_->take_error();
    return Status(StatusCode::internal, "cannot allocate a KV pool of " +
                                            std::to_string(n_pages * page_size_) + " tokens" +
                                            (err.empty() ? "" : ": " + err));
  }
  CacheConfig cc;
  cc.policy = choice.policy;
  cc.eviction = config.eviction;
  cc.page_size = page_size_;
  cc.total_pages = n_pages;
  cc.shape = {mc.n_layers, mc.n_kv_heads, mc.head_dim, int(kernels::kv_elem_bytes(kv_type_))};
  Result<std::unique_ptr<KvCache>> cache = make_kv_cache(cc);
  if (!cache.ok()) {
    release_compute();
    return cache.status();
  }
  cache_ = std::move(cache.value());
  Result<std::unique_ptr<runtime::ModelRunner>> runner = runtime::ModelRunner::create(
      *model_, *backend_, *pool_, max_batch, max_rows, config.weight_copies);
  if (!runner.ok()) {
    release_compute();
    return runner.status();
  }
  runner_ = std::move(runner.value());
  return Status();
}

Status runtime::EngineImpl::load_model(const std::string& path, const Progress& progress) {
  Result<std::unique_ptr<model::ModelFile>> model = model::load_model(path);
  if (!model.ok()) return model.status();
  model_ = std::move(model.value());
  if (!prefault_weights(*model_->file, progress)) return load_cancelled();
  return Status();
}

Status runtime::EngineImpl::load_tokenizer(const std::string& path,
                                           const std::string& chat_template) {
  Result<std::unique_ptr<tok::Tokenizer>> tokenizer = tok::Tokenizer::load(path);
  if (!tokenizer.ok()) return tokenizer.status();
  tokenizer_ = std::move(tokenizer.value());
  constraints_ = std::make_unique<structured::ConstraintFactory>(*tokenizer_);
  Result<tok::ChatTemplate> tmpl =
      tok::ChatTemplate::for_model(model_->file.get(), tokenizer_.get(), chat_template);
  if (!tmpl.ok()) return tmpl.status();
  template_ = std::make_unique<tok::ChatTemplate>(tmpl.value());
  return Status();
}

void runtime::EngineImpl::size_kv(const EngineConfig& config) {
  const model::ModelConfig& mc = model_->config;
  context_ =
      config.context_length > 0 ? std::min(config.context_length, mc.n_ctx_train) : mc.n_ctx_train;
  page_size_ = runtime::cache_choice(config.cache).page_size;
  kv_type_ = runtime::kv_dtype(config.kv_type);
  bytes_per_token_ =
      kernels::kv_bytes_per_token({mc.n_layers, mc.n_kv_heads, mc.head_dim, 1, 1, kv_type_});
}

Status runtime::EngineImpl::choose_backend(const EngineConfig& config) {
  const CacheChoice choice = runtime::cache_choice(config.cache);
  kernels::DeviceChoice device = kernels::select_device(runtime::device_request(config.backend));
  std::string reason = device.reason, note;
  if (device.kind == kernels::DeviceKind::cuda) {
    std::string why;
    backend_ = kernels::make_cuda_backend(&why);  // through the plugin
    if (backend_) {
      Status st = setup_compute(config, choice, &note);
      if (st.ok()) {
        info_.backend = "cuda";
      } else {
        why = st.message();
        backend_.reset();
      }
    }
    if (!backend_) {
      reason = device.name + " found, but CUDA failed (" + why + "); running on the CPU";
    }
  }
  if (!backend_) {
    note.clear();  // a note of a failed CUDA attempt is not about the CPU pool
    backend_ = kernels::make_cpu_backend(config.n_threads);
    info_.backend = "cpu";
    Status st = setup_compute(config, choice, &note);
    if (!st.ok()) return st;
  }
  info_.device = backend_->name();
  info_.backend_reason = note.empty() ? reason : reason + "; " + note;
  return Status();
}

Status runtime::EngineImpl::attach_tiers(const EngineConfig& config) {
  if (!runtime::wants_tiers(config)) return Status();
  Result<std::unique_ptr<tiers::KvTiers>> tiers = runtime::open_tiers(
      config, *model_, runtime::cache_choice(config.cache).policy, *backend_, *pool_);
  if (!tiers.ok()) return tiers.status();
  tiers_ = std::move(tiers.value());
  cache_->set_tier_probe([raw = tiers_.get()](std::span<const Token> path, int64_t from) {
    return raw->held_tokens(path, from);
  });
  return Status();
}

void runtime::EngineImpl::start_scheduler(const EngineConfig& config) {
  runtime::SchedulerConfig sc{config.prefill_chunk, std::max(config.max_batch_tokens, 1),
                              config.max_running, config.max_queue_age_steps,
                              config.speculate == SpeculateSetting::tree};
  scheduler_ =
      std::make_unique<runtime::Scheduler>(sc, *cache_, *runner_, *tokenizer_, tiers_.get());
  scheduler_->set_before_finish([this] { publish(); });
}

void runtime::EngineImpl::describe(const EngineConfig& config, const std::string& path) {
  const model::ModelConfig& mc = model_->config;
  info_.path = path;
  info_.name = mc.name.empty() ? std::filesystem::path(path).stem().string() : mc.name;
  info_.architecture = mc.arch;
  info_.context_length = context_;
  info_.n_vocab = mc.n_vocab;
  info_.chat_template = template_->name();
  info_.chat_template_detail = template_->detail();
  info_.chat_template_notice = template_->notice();
  info_.reasoning = template_->reasoning();
  info_.cache = setting_name(config.cache);
  info_.kv_pool_tokens = cache_->config().total_pages * page_size_;
  info_.kv_type = kernels::dtype_name(kv_type_);
  info_.sampling = mc.sampling;
}

Result<std::unique_ptr<Engine>> runtime::EngineImpl::create(const EngineConfig& config) {
  std::unique_ptr<EngineImpl> e(new EngineImpl());
  const std::string path =
      config.model_path.empty() ? model::default_model_path() : config.model_path;
  const Progress progress = [&](float f) {
    return !config.load_progress || config.load_progress(f);
  };
  if (!progress(0.0f)) return load_cancelled();
  if (Status st = e->load_model(path, progress); !st.ok()) return st;
  if (Status st = e->load_tokenizer(path, config.chat_template); !st.ok()) return st;
  e->size_kv(config);
  if (Status st = e->choose_backend(config); !st.ok()) return st;
  if (Status st = e->attach_tiers(config); !st.ok()) return st;
  e->start_scheduler(config);
  e->describe(config, path);
  if (!progress(1.0f)) return load_cancelled();
  e->publish();
  e->thread_ = std::thread([raw = e.get()] { raw->run(); });
  return std::unique_ptr<Engine>(std::move(e));
}

Result<std::unique_ptr<Engine>> Engine::create(const EngineConfig& config) {
  return EngineImpl::create(config);
}

}  // namespace rc
