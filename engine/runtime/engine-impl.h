// Engine's implementation: the service around the scheduler. Owns the
// model, backend, KV pool, cache, runner and the engine thread; every
// public call either validates on the caller's thread and posts to the
// engine thread, or reads state the engine thread published. Loading and
// setting up (create and its steps) are in engine.cpp.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "engine-setup.h"
#include "model-runner.h"
#include "model/model-file.h"
#include "purge.h"
#include "radixchat/engine.h"
#include "reply-memory.h"
#include "scheduler.h"
#include "structured/constraint-factory.h"
#include "tier-setup.h"
#include "tokenizer/chat-exact.h"
#include "tokenizer/chat-template.h"
#include "tokenizer/tokenizer.h"

namespace rc::runtime {

class EngineImpl final : public Engine {
 public:
  using Progress = std::function<bool(float)>;

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
      auto r = std::make_unique<runtime::Request>(next_id_.fetch_add(1), std::move(tokens.value()),
                                                  params, finished_into(promise), *tokenizer_);
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
    auto r = std::make_unique<runtime::Request>(next_id_.fetch_add(1), std::move(prompt.value()),
                                                params, finished_into(promise), *tokenizer_);
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

  // A request's callback that hands its final status to `promise`.
  static StreamCallback finished_into(std::shared_ptr<std::promise<Status>> promise) {
    return [promise = std::move(promise)](const StreamEvent& ev) {
      if (ev.finished) promise->set_value(ev.error);
      return true;
    };
  }

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

}  // namespace rc::runtime
