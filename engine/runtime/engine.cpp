// Engine: the service around the scheduler. Owns the model, backend, KV
// pool, cache, runner and the engine thread; every public call either
// validates on the caller's thread and posts to the engine thread, or
// reads state the engine thread published.
#include "radixchat/engine.h"

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "cpu/cpu-backends.h"
#include "cuda-plugin.h"
#include "device-select.h"
#include "device-weights.h"
#include "engine-setup.h"
#include "kv-type.h"
#include "model-runner.h"
#include "model/default-model.h"
#include "model/model-file.h"
#include "purge.h"
#include "reply-memory.h"
#include "scheduler.h"
#include "structured/constraint-factory.h"
#include "tier-setup.h"
#include "tokenizer/chat-exact.h"
#include "tokenizer/chat-template.h"
#include "tokenizer/tokenizer.h"

namespace rc {

namespace {

using runtime::CacheChoice;
using runtime::default_pool_tokens;
using runtime::device_reserve_bytes;
using runtime::prefault_weights;
using Progress = std::function<bool(float)>;

Status load_cancelled() { return Status(StatusCode::cancelled, "model loading was cancelled"); }

// Logit rows beyond one per running request that drafted steps may use.
constexpr int kDraftLogitRows = runtime::DraftBudget::kMaxTokens + 1;

class EngineImpl final : public Engine {
 public:
  ~EngineImpl() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // Loads, sets up and starts an engine, one step after another below.
  static Result<std::unique_ptr<Engine>> create(const EngineConfig& config);
  // The steps of create, in order; each fails with what stops the engine.
  // Maps the model file and reads every weight page once.
  Status load_model(const std::string& path, const Progress& progress);
  // The tokenizer, the chat template and the JSON constraint factory.
  Status load_tokenizer(const std::string& path, const std::string& chat_template);
  // Context length, page size and KV type: what sizes the pool.
  void size_kv(const EngineConfig& config);
  // CUDA when a device answers (or was asked for) and works end to end up
  // to a ready runner; on any CUDA failure the CPU, with the reason.
  Status choose_backend(const EngineConfig& config);
  // The cache tiers below the pool, when the config names any.
  Status attach_tiers(const EngineConfig& config);
  void start_scheduler(const EngineConfig& config);
  void describe(const EngineConfig& config, const std::string& path);
  // With backend_ set: sizes and makes the KV pool, the cache and the runner
  // (which copies the weights to a device backend). On failure everything it
  // made is released again (backend_ is kept). `note` gets a line for the
  // user when the pool had to be smaller than asked.
  Status setup_compute(const EngineConfig& config, const CacheChoice& choice, std::string* note);
  void release_compute() {
    runner_.reset();
    cache_.reset();
    pool_.reset();
  }

  Result<RequestId> submit(GenerateRequest request, StreamCallback callback) override {
    Result<std::vector<int32_t>> prompt = prompt_tokens(request);
    if (!prompt.ok()) return prompt.status();
    Status st = fit_to_context(prompt.value(), request.max_tokens);
    if (!st.ok()) return st;
    Result<std::unique_ptr<structured::JsonConstraint>> constraint =
        constraints_->make(request.response_format, request.max_tokens);
    if (!constraint.ok()) return constraint.status();
    RequestId id = next_id_.fetch_add(1);
    if (!request.messages.empty()) callback = remembering(std::move(callback));
    auto r = std::make_unique<runtime::Request>(id, std::move(prompt.value()), request,
                                                std::move(callback), *tokenizer_);
    r->constraint = std::move(constraint.value());
    enqueue(std::move(r));
    return id;
  }

  void cancel(RequestId id) override {
    post([this, id] { scheduler_->cancel(id); });
  }

  Status warmup(const std::vector<std::vector<ChatMessage>>& conversations) override {
    std::vector<std::future<Status>> done;
    for (const auto& messages : conversations) {
      // Without the assistant opening: later chats continue with a user turn.
      Result<std::vector<int32_t>> tokens = render(messages, /*add_assistant_prompt=*/false);
      if (!tokens.ok()) return tokens.status();
      int no_output = 0;
      Status st = fit_to_context(tokens.value(), no_output);
      if (!st.ok()) return st;
      auto promise = std::make_shared<std::promise<Status>>();
      done.push_back(promise->get_future());
      GenerateRequest params;
      params.max_tokens = 0;
      auto r = std::make_unique<runtime::Request>(
          next_id_.fetch_add(1), std::move(tokens.value()), params,
          [promise](const StreamEvent& ev) {
            if (ev.finished) promise->set_value(ev.error);
            return true;
          },
          *tokenizer_);
      r->pin_prefix = true;
      enqueue(std::move(r));
    }
    for (auto& f : done) {
      Status st = f.get();
      if (!st.ok()) return st;
    }
    return Status();
  }

  Result<int> unpin_warmup(const std::vector<std::vector<ChatMessage>>& conversations) override {
    std::vector<std::vector<int32_t>> prompts;
    for (const auto& messages : conversations) {
      Result<std::vector<int32_t>> tokens = render(messages, /*add_assistant_prompt=*/false);
      if (!tokens.ok()) return tokens.status();
      prompts.push_back(std::move(tokens.value()));
    }
    auto done = std::make_shared<std::promise<int>>();
    auto future = done->get_future();
    post([this, done, &prompts] {
      int released = 0;
      for (const auto& p : prompts) released += scheduler_->unpin_prompt(p) ? 1 : 0;
      publish();
      done->set_value(released);
    });
    return future.get();
  }

  Result<PrefixResidence> locate_prefix(const std::vector<int32_t>& tokens) const override {
    PrefixResidence where;
    auto pool = std::make_shared<std::promise<int64_t>>();
    auto in_pool = pool->get_future();
    post([this, pool, &tokens] { pool->set_value(cache_->peek_prefix(tokens)); });
    where.pool_tokens = in_pool.get();
    where.page_tokens = page_size_;
    if (tiers_) {
      where.block_tokens = tiers_->keyspace().block_tokens;
      for (const auto& [name, held] : tiers_->held_from_start(tokens))
        where.tiers.push_back({name, held});
    }
    return where;
  }

  Result<std::vector<float>> last_logits(const std::vector<int32_t>& tokens) override {
    GenerateRequest params;
    params.tokens = tokens;
    params.max_tokens = 1;
    params.ignore_eos = true;
    Result<std::vector<int32_t>> prompt = prompt_tokens(params);
    if (!prompt.ok()) return prompt.status();
    Status st = fit_to_context(prompt.value(), params.max_tokens);
    if (!st.ok()) return st;
    auto logits = std::make_shared<std::vector<float>>();
    auto promise = std::make_shared<std::promise<Status>>();
    std::future<Status> done = promise->get_future();
    auto r = std::make_unique<runtime::Request>(
        next_id_.fetch_add(1), std::move(prompt.value()), params,
        [promise](const StreamEvent& ev) {
          if (ev.finished) promise->set_value(ev.error);
          return true;
        },
        *tokenizer_);
    r->logits_out = logits;
    enqueue(std::move(r));
    st = done.get();
    if (!st.ok()) return st;
    if (logits->empty()) return Status(StatusCode::cancelled, "the engine stopped");
    return std::move(*logits);
  }

  EngineStats stats() const override {
    EngineStats s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      s = published_;
    }
    // Live: the writer thread keeps writing after the engine goes idle.
    if (tiers_) s.tiers = tiers_->stats();
    return s;
  }

  Status clear_tier_cache() override {
    if (!tiers_) return Status();
    auto done = std::make_shared<std::promise<void>>();
    auto future = done->get_future();
    post([this, done] {
      tiers_->clear_local();
      publish();
      done->set_value();
    });
    future.wait();
    return Status();
  }

  Result<ForgetResult> forget(const std::vector<std::vector<int32_t>>& gone,
                              const std::vector<std::vector<int32_t>>& kept) override {
    auto done = std::make_shared<std::promise<ForgetResult>>();
    auto future = done->get_future();
    post([this, done, &gone, &kept] {
      done->set_value(runtime::forget_prefixes(*cache_, tiers_.get(), gone, kept));
      publish();
    });
    return future.get();
  }

  Result<ForgetResult> forget_document(const std::string& text) override {
    Result<std::vector<int32_t>> tokens = tokenizer_->encode(text, false);
    if (!tokens.ok()) return tokens.status();
    const tiers::TokenWindows windows(tokens.value());
    auto done = std::make_shared<std::promise<Result<ForgetResult>>>();
    auto future = done->get_future();
    post([this, done, &windows] {
      scheduler_->unpin_holding(windows);
      done->set_value(runtime::forget_holding(*cache_, tiers_.get(), windows));
      publish();
    });
    return future.get();
  }

  CacheSnapshot cache_snapshot() const override {
    auto take = [this] {
      CacheSnapshot s = cache_->snapshot();
      if (tiers_) runtime::mark_held_below(s, *tiers_);
      return s;
    };
    if (std::this_thread::get_id() == thread_.get_id()) return take();
    auto promise = std::make_shared<std::promise<CacheSnapshot>>();
    auto future = promise->get_future();
    post([promise, take] { promise->set_value(take()); });
    return future.get();
  }

  std::vector<CacheEvent> drain_events(bool* overflowed) override {
    std::vector<CacheEvent> out;
    const bool lost = cache_->events().drain(out);
    if (overflowed) *overflowed = lost;
    return out;
  }

  const ModelInfo& model_info() const override { return info_; }

  Result<std::vector<int32_t>> tokenize(const std::string& text, bool add_bos) const override {
    return tokenizer_->encode(text, add_bos);
  }

  std::string detokenize(const std::vector<int32_t>& tokens) const override {
    return tokenizer_->decode(tokens);
  }

  Result<std::vector<int32_t>> render_chat(
      const std::vector<ChatMessage>& messages) const override {
    return render(messages, /*add_assistant_prompt=*/true);
  }

 private:
  EngineImpl() = default;

  Result<std::vector<int32_t>> render(const std::vector<ChatMessage>& messages,
                                      bool add_assistant_prompt) const {
    // The template writes BOS and the turn markers itself; message content
    // is encoded as text, so a typed "<|im_end|>" cannot close a turn. A
    // reply whose generated ids are known (given, or remembered) goes in as
    // those ids, so it matches the cached reply (chat-exact.h).
    const std::vector<tok::ChatMessage> m = tok::ChatTemplate::convert(messages);
    std::vector<std::vector<int32_t>> recalled(messages.size());
    std::vector<std::span<const int32_t>> ids(messages.size());
    for (size_t i = 0; i < messages.size(); ++i) {
      if (messages[i].role != "assistant") continue;
      if (messages[i].tokens.empty()) recalled[i] = replies_.recall(messages[i].content);
      ids[i] = messages[i].tokens.empty() ? recalled[i] : messages[i].tokens;
    }
    Result<tok::ExactRender> r =
        tok::render_tokens_exact(*template_, *tokenizer_, m, ids, add_assistant_prompt);
    if (!r.ok()) return r.status();
    return std::move(r->tokens);
  }

  // Wraps a chat request's callback so that its reply's ids are remembered
  // by their text when it finishes (the next turn sends the text back).
  StreamCallback remembering(StreamCallback inner) {
    struct Reply {
      std::vector<int32_t> ids;
      std::string text;
    };
    auto reply = std::make_shared<Reply>();
    return [this, reply, inner = std::move(inner)](const StreamEvent& ev) {
      if (ev.token >= 0) reply->ids.push_back(ev.token);
      reply->text += ev.text;
      if (ev.finished && ev.reason != FinishReason::error &&
          tok::reply_text(*tokenizer_, reply->ids) == reply->text) {
        replies_.remember(reply->text, std::move(reply->ids));
      }
      return inner ? inner(ev) : true;
    };
  }

  Result<std::vector<int32_t>> prompt_tokens(const GenerateRequest& req) const {
    if (!req.messages.empty()) return render_chat(req.messages);
    if (!req.prompt.empty()) return tokenizer_->encode(req.prompt, tokenizer_->add_bos_default());
    for (int32_t t : req.tokens) {
      if (t < 0 || t >= info_.n_vocab) {
        return Status(StatusCode::invalid_argument,
                      "token id " + std::to_string(t) + " outside the vocabulary");
      }
    }
    if (!req.tokens.empty()) return req.tokens;
    return Status(StatusCode::invalid_argument, "empty request: no messages, prompt or tokens");
  }

  // Refuses prompts that cannot fit and trims max_tokens to the context.
  Status fit_to_context(const std::vector<int32_t>& prompt, int& max_tokens) const {
    const int n = static_cast<int>(prompt.size());
    if (n == 0) return Status(StatusCode::invalid_argument, "empty prompt");
    if (max_tokens < 0) return Status(StatusCode::invalid_argument, "max_tokens must be >= 0");
    if (n >= context_) {
      return Status(StatusCode::too_long, "prompt has " + std::to_string(n) +
                                              " tokens; the context holds " +
                                              std::to_string(context_) +
                                              " (shorten the conversation or start a new one)");
    }
    max_tokens = std::min(max_tokens, context_ - n);
    const int64_t pages = (n + max_tokens + page_size_ - 1) / page_size_;
    if (pages > cache_->config().total_pages) {
      return Status(StatusCode::no_pages, "request needs " + std::to_string(pages * page_size_) +
                                              " KV tokens; the pool holds " +
                                              std::to_string(info_.kv_pool_tokens));
    }
    return Status();
  }

  // The engine thread owns the request from here; tasks still queued at
  // shutdown run before the final abort, so every request gets its finish.
  void enqueue(std::unique_ptr<runtime::Request> r) {
    post([this, raw = r.release()] { scheduler_->add(std::unique_ptr<runtime::Request>(raw)); });
  }

  // Queues a task for the engine thread; any thread, also from const calls.
  void post(std::function<void()> task) const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      inbox_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

  void publish() {
    const runtime::SchedulerTotals& t = scheduler_->totals();
    EngineStats s;
    s.requests_finished = t.finished;
    s.requests_running = scheduler_->running();
    s.requests_waiting = scheduler_->waiting();
    s.prompt_tokens = t.prompt_tokens;
    s.cached_tokens = t.cached_tokens;
    s.output_tokens = t.output_tokens;
    s.hit_rate = t.prompt_tokens ? double(t.cached_tokens) / t.prompt_tokens : 0.0;
    s.mean_matched_len = t.finished ? double(t.cached_tokens) / t.finished : 0.0;
    s.ttft_ms_mean = t.ttft_count ? t.ttft_ms_sum / t.ttft_count : 0.0;
    s.itl_ms_mean = t.itl_count ? t.itl_ms_sum / t.itl_count : 0.0;
    s.cache = cache_->stats();
    s.kv_bytes_total = s.cache.total_pages * page_size_ * bytes_per_token_;
    s.kv_bytes_used_peak = t.peak_used_pages * page_size_ * bytes_per_token_;
    s.drafted_tokens = t.drafted_tokens;
    s.accepted_tokens = t.accepted_tokens;
    s.draft_steps = t.draft_steps;
    std::lock_guard<std::mutex> lock(mu_);
    published_ = s;
  }

  bool stopping() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  }

  void run() {
    for (;;) {
      std::vector<std::function<void()>> tasks;
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (!busy_) cv_.wait(lock, [&] { return stop_ || !inbox_.empty(); });
        tasks.swap(inbox_);
      }
      for (auto& task : tasks) task();
      if (stopping()) break;
      busy_ = scheduler_->step();
      publish();
    }
    scheduler_->abort_all(FinishReason::cancelled,
                          Status(StatusCode::cancelled, "the engine shut down"));
  }

  std::unique_ptr<model::ModelFile> model_;
  std::unique_ptr<tok::Tokenizer> tokenizer_;
  std::unique_ptr<tok::ChatTemplate> template_;
  std::unique_ptr<kernels::Backend> backend_;
  std::unique_ptr<kernels::KvPool> pool_;
  std::unique_ptr<KvCache> cache_;
  // After pool_: destroyed first, finishing its queued writes.
  std::unique_ptr<tiers::KvTiers> tiers_;
  std::unique_ptr<runtime::ModelRunner> runner_;
  std::unique_ptr<runtime::Scheduler> scheduler_;
  std::unique_ptr<structured::ConstraintFactory> constraints_;
  mutable runtime::ReplyMemory replies_;
  ModelInfo info_;
  int context_ = 0;
  int page_size_ = 1;
  int64_t bytes_per_token_ = 0;
  kernels::DType kv_type_ = kernels::DType::f16;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable std::vector<std::function<void()>> inbox_;
  bool stop_ = false;
  bool busy_ = false;  // engine thread only
  EngineStats published_;
  std::atomic<RequestId> next_id_{1};
  std::thread thread_;
};

Status EngineImpl::setup_compute(const EngineConfig& config, const CacheChoice& choice,
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

Status EngineImpl::load_model(const std::string& path, const Progress& progress) {
  Result<std::unique_ptr<model::ModelFile>> model = model::load_model(path);
  if (!model.ok()) return model.status();
  model_ = std::move(model.value());
  if (!prefault_weights(*model_->file, progress)) return load_cancelled();
  return Status();
}

Status EngineImpl::load_tokenizer(const std::string& path, const std::string& chat_template) {
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

void EngineImpl::size_kv(const EngineConfig& config) {
  const model::ModelConfig& mc = model_->config;
  context_ =
      config.context_length > 0 ? std::min(config.context_length, mc.n_ctx_train) : mc.n_ctx_train;
  page_size_ = runtime::cache_choice(config.cache).page_size;
  kv_type_ = runtime::kv_dtype(config.kv_type);
  bytes_per_token_ =
      kernels::kv_bytes_per_token({mc.n_layers, mc.n_kv_heads, mc.head_dim, 1, 1, kv_type_});
}

Status EngineImpl::choose_backend(const EngineConfig& config) {
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

Status EngineImpl::attach_tiers(const EngineConfig& config) {
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

void EngineImpl::start_scheduler(const EngineConfig& config) {
  runtime::SchedulerConfig sc{config.prefill_chunk, std::max(config.max_batch_tokens, 1),
                              config.max_running, config.max_queue_age_steps,
                              config.speculate == SpeculateSetting::tree};
  scheduler_ =
      std::make_unique<runtime::Scheduler>(sc, *cache_, *runner_, *tokenizer_, tiers_.get());
  scheduler_->set_before_finish([this] { publish(); });
}

void EngineImpl::describe(const EngineConfig& config, const std::string& path) {
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

Result<std::unique_ptr<Engine>> EngineImpl::create(const EngineConfig& config) {
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

}  // namespace

Result<std::unique_ptr<Engine>> Engine::create(const EngineConfig& config) {
  return EngineImpl::create(config);
}

}  // namespace rc
