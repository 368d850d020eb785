#include "chat/engine-worker.h"

#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <memory>

#include "radixchat/model-tools.h"

namespace rc::ui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

ModelDescription describe(const rc::ModelInfo& info, bool bundled) {
  ModelDescription d;
  d.name = qs(info.name);
  d.path = qs(info.path);
  d.architecture = qs(info.architecture);
  d.backend = qs(info.backend);
  d.device = qs(info.device);
  d.backendReason = qs(info.backend_reason);
  d.cachePolicy = qs(info.cache);
  d.poolTokens = info.kv_pool_tokens;
  d.kvType = qs(info.kv_type);
  d.contextLength = info.context_length;
  d.chatTemplate = qs(info.chat_template);
  d.chatTemplateDetail = qs(info.chat_template_detail);
  d.chatTemplateNotice = qs(info.chat_template_notice);
  d.reasoning = info.reasoning;
  d.sampling = info.sampling;
  d.bundled = bundled;
  return d;
}

ReplyMetrics toMetrics(const rc::RequestMetrics& m, rc::FinishReason reason) {
  ReplyMetrics r;
  r.promptTokens = m.prompt_tokens;
  r.cachedTokens = m.cached_tokens;
  r.loadedTokens = m.loaded_tokens;
  r.completionTokens = m.output_tokens;
  r.ttftMs = m.ttft_ms;
  const double decodeS = (m.total_ms - m.ttft_ms) / 1000.0;
  r.tokensPerSecond = m.output_tokens > 1 && decodeS > 0 ? (m.output_tokens - 1) / decodeS : 0.0;
  r.finishReason = QString::fromLatin1(rc::finish_reason_name(reason));
  r.draftedTokens = m.drafted_tokens;
  r.acceptedTokens = m.accepted_tokens;
  return r;
}

size_t commonPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

EngineWorker::EngineWorker() = default;

EngineWorker::~EngineWorker() { shutdown(); }

void EngineWorker::stop(quint64 tag) {
  rc::Engine* engine = nullptr;
  rc::RequestId id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A stop may overtake its own generate() in the worker's queue: remember
    // it, and generate() will finish the request at once. Tags generate()
    // has already seen and that are gone are finished: ignore them.
    if (!active_.count(tag) && tag <= lastTagSeen_) return;
    Active& a = active_[tag];
    a.stopRequested = true;
    engine = a.engine;
    id = a.id;
    // Cancel while holding the lock: the engine cannot be destroyed under us
    // because destroyEngine() takes the same lock before the engine goes.
    if (engine && id) engine->cancel(id);
  }
}

void EngineWorker::cancelLoad(quint64 upTo) {
  quint64 seen = cancelUpTo_.load();
  while (seen < upTo && !cancelUpTo_.compare_exchange_weak(seen, upTo)) {
  }
}

Result<std::unique_ptr<rc::Engine>> EngineWorker::create(const ModelRequest& request,
                                                         const std::function<bool(float)>& progress,
                                                         QString* tierNotice) {
  // The saved settings are names; a bad one fails the load in the engine's words.
  Result<rc::CacheSetting> cache = rc::parse_cache_setting(request.cachePolicy.toStdString());
  if (!cache.ok()) return cache.status();
  Result<rc::KvType> kvType = rc::parse_kv_type(request.kvType.toStdString());
  if (!kvType.ok()) return kvType.status();
  rc::EngineConfig config;
  config.model_path = request.path.toStdString();
  config.cache = cache.value();
  config.kv_pool_tokens = request.poolTokens;
  config.kv_type = kvType.value();
  config.n_threads = request.threads;
  config.speculate = request.drafted ? rc::SpeculateSetting::tree : rc::SpeculateSetting::off;
  config.kv_disk = request.kvDisk.toStdString();
  config.kv_disk_bytes = request.kvDiskBytes;
  config.kv_redis = request.kvRedis.toStdString();
  config.load_progress = progress;
  Result<std::unique_ptr<rc::Engine>> created = rc::Engine::create(config);
  if (created.ok() || config.kv_disk.empty() ||
      created.status().code() == rc::StatusCode::cancelled)
    return created;
  // Another process (a second window of the app) owns the disk cache, or
  // its folder cannot be made: the model runs without it rather than not
  // at all. When it fails without the disk cache too, the model is at fault.
  const std::string why = created.status().message();
  config.kv_disk.clear();
  created = rc::Engine::create(config);
  if (created.ok()) *tierNotice = tr("Disk cache off: %1").arg(qs(why));
  return created;
}

void EngineWorker::load(const ModelRequest& request) {
  const bool released = request.releaseFirst && engine_;
  if (released) {
    // The old engine must close before the new one opens the disk folder;
    // a file that cannot load is found first, so the working engine, its
    // tree and its pins stay exactly as they were (reopening it would lose
    // all of that but what the disk tier holds).
    if (rc::Status s = rc::check_model_file(request.path.toStdString()); !s.ok()) {
      emit engineRestored(engine_.get(), describe(engine_->model_info(), current_.path.isEmpty()));
      emit loadFailed(qs(s.message()), false);
      return;
    }
  }
  if (request.releaseFirst) {
    // The GUI has let go of every engine (EngineHost::load): the old one
    // writes its queued blocks and unlocks the disk folder before the new
    // one opens it.
    for (auto& e : retired_) destroyEngine(e);
    retired_.clear();
    if (engine_) destroyEngine(engine_);
  }
  int lastPercent = -1;
  const quint64 serial = request.serial;
  auto progress = [this, &lastPercent, serial](float f) {
    const int percent = static_cast<int>(std::lround(f * 100.0f));
    if (percent != lastPercent) {  // a few hundred signals at most
      lastPercent = percent;
      emit loadProgress(f);
    }
    return serial > cancelUpTo_.load();
  };
  QString tierNotice;
  Result<std::unique_ptr<rc::Engine>> created = create(request, progress, &tierNotice);
  if (!created.ok()) {
    const bool cancelled = created.status().code() == rc::StatusCode::cancelled;
    // The old engine was closed for the disk folder's sake: it comes back
    // (its cache from disk), so a model that fails to load leaves the
    // previous one serving, as without the disk cache.
    if (released) {
      QString notice;
      Result<std::unique_ptr<rc::Engine>> back = create(
          current_, [](float) { return true; }, &notice);
      if (back.ok()) {
        engine_ = std::move(back.value());
        ModelDescription d = describe(engine_->model_info(), current_.path.isEmpty());
        d.tierNotice = notice;
        emit engineRestored(engine_.get(), d);
      }
    }
    emit loadFailed(qs(created.status().message()), cancelled);
    return;
  }
  // Keep the previous engine until the GUI has moved its users over.
  if (engine_) retired_.push_back(std::move(engine_));
  engine_ = std::move(created.value());
  current_ = request;
  ModelDescription d = describe(engine_->model_info(), request.path.isEmpty());
  d.tierNotice = tierNotice;
  emit loadSucceeded(engine_.get(), d);
}

void EngineWorker::generate(quint64 tag, const GenerationJob& job) {
  auto finishNow = [&](QString reason, QString error) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      active_.erase(tag);
    }
    GenerationOutcome out;
    out.reason = std::move(reason);
    out.error = std::move(error);
    out.metrics.finishReason = out.reason;
    emit generationFinished(tag, out);
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    lastTagSeen_ = std::max(lastTagSeen_, tag);
    if (active_[tag].stopRequested) {
      active_.erase(tag);
      GenerationOutcome out;
      out.reason = out.metrics.finishReason = QStringLiteral("cancelled");
      emit generationFinished(tag, out);
      return;
    }
  }
  if (!engine_) return finishNow(QStringLiteral("error"), tr("No model is loaded."));

  const int modelContext = engine_->model_info().context_length;
  const int context =
      job.contextLength > 0 ? std::min(job.contextLength, modelContext) : modelContext;
  // The documents join this prompt's system message (the history keeps the
  // plain one), before the fit, which then counts them.
  rc::GenerateRequest placedIn;
  placedIn.messages = job.messages;
  auto placed = std::make_shared<rc::PlacedDocuments>();  // read by the stream callback
  if (!job.documents.empty()) {
    Result<rc::PlacedDocuments> p = rc::place_documents(*engine_, placedIn, job.documents);
    if (!p.ok()) {
      return finishNow(QStringLiteral("error"),
                       tr("The documents cannot be placed: %1").arg(qs(p.status().message())));
    }
    *placed = std::move(p.value());
  }
  // Leave room for a reply: a quarter of the context or max tokens if less.
  const int reserve = std::max(1, std::min(job.maxTokens, context / 4));
  Result<rc::ContextFit> fit = rc::fit_context(placedIn.messages, context - reserve,
                                               job.contextPolicy, rc::chat_token_counter(*engine_));
  if (!fit.ok()) {
    return finishNow(QStringLiteral("error"),
                     tr("The conversation does not fit a context of %1 tokens: %2.")
                         .arg(context)
                         .arg(qs(fit.status().message())));
  }
  const int dropped = fit->dropped;
  const bool prefixChanged = fit->prefix_changed;

  rc::GenerateRequest request;
  request.messages = std::move(fit->messages);
  request.sampling = job.sampling;
  request.max_tokens = job.maxTokens;
  if (job.contextLength > 0) {
    Result<std::vector<int32_t>> prompt = engine_->render_chat(request.messages);
    if (prompt.ok()) {
      request.max_tokens = std::max(1, std::min(job.maxTokens, context - int(prompt->size())));
    }
  }
  auto cutPrompt = std::make_shared<std::vector<int32_t>>();  // GenerationOutcome::promptTokens
  if (prefixChanged) {
    Result<std::vector<int32_t>> prompt = engine_->render_chat(request.messages);
    if (prompt.ok()) *cutPrompt = std::move(prompt.value());
  }

  rc::Engine* engine = engine_.get();
  std::lock_guard<std::mutex> lock(mu_);  // the callback waits until the id is recorded
  auto ids = std::make_shared<std::vector<int32_t>>();  // engine thread only
  Result<rc::RequestId> id = engine->submit(
      std::move(request),
      [this, tag, dropped, prefixChanged, ids, cutPrompt, placed](const rc::StreamEvent& ev) {
        bool stopped = false;
        {
          std::lock_guard<std::mutex> lock(mu_);
          auto it = active_.find(tag);
          stopped = it != active_.end() && it->second.stopRequested;
          if (ev.finished && it != active_.end()) active_.erase(it);
        }
        if (ev.token >= 0) ids->push_back(ev.token);
        if (!ev.text.empty()) emit textArrived(tag, qs(ev.text));
        if (ev.finished) {
          GenerationOutcome out;
          out.metrics = toMetrics(ev.metrics, ev.reason);
          out.metrics.documentTokens = placed->tokens;
          out.metrics.cachedDocumentTokens = placed->cached(ev.metrics.cached_tokens);
          out.metrics.documentsRetrieved = placed->layout.retrieved;
          out.reason = out.metrics.finishReason;
          if (ev.reason == rc::FinishReason::error) out.error = qs(ev.error.message());
          out.droppedMessages = dropped;
          out.prefixChanged = prefixChanged;
          out.tokens = std::move(*ids);
          out.promptTokens = std::move(*cutPrompt);
          emit generationFinished(tag, out);
        }
        return !stopped;
      });
  if (!id.ok()) {
    active_.erase(tag);
    GenerationOutcome out;
    out.reason = out.metrics.finishReason = QStringLiteral("error");
    out.error = qs(id.status().message());
    emit generationFinished(tag, out);
    return;
  }
  // The callback cannot have run yet: it takes mu_, which we hold.
  Active& a = active_[tag];
  a.engine = engine;
  a.id = id.value();
  // A stop() that arrived between the check above and here found no id.
  if (a.stopRequested) engine->cancel(a.id);
}

void EngineWorker::warmup(const QStringList& systemPrompts) {
  if (!engine_) {
    emit warmedUp(0, tr("No model is loaded."));
    return;
  }
  std::vector<std::vector<rc::ChatMessage>> conversations;
  for (const QString& p : systemPrompts) {
    if (!p.trimmed().isEmpty()) conversations.push_back({{"system", p.toStdString()}});
  }
  if (conversations.empty()) {
    emit warmedUp(0, {});
    return;
  }
  rc::Status st = engine_->warmup(conversations);
  emit warmedUp(static_cast<int>(conversations.size()), st.ok() ? QString() : qs(st.message()));
}

void EngineWorker::matchPrefix(quint64 tag, const std::vector<int32_t>& tokens,
                               const std::vector<PrefixCandidate>& candidates) {
  // Best branch per conversation: the path is what the cache holds for one
  // message of a thread (cachedThreadTokens), so each message of each
  // candidate is rendered the same way and the longest agreement counts.
  std::map<qint64, PrefixMatch> best;
  if (engine_ && !tokens.empty()) {
    for (const PrefixCandidate& c : candidates) {
      int shared = 0;
      for (size_t end = 1; end <= c.messages.size(); ++end) {
        const std::vector<rc::ChatMessage> upTo(c.messages.begin(), c.messages.begin() + end);
        shared = std::max(shared, static_cast<int>(commonPrefix(tokens, cachedThreadTokens(upTo))));
      }
      PrefixMatch& m = best[c.conversationId];
      if (m.conversationId == 0 || shared > m.sharedTokens) {
        m = {c.conversationId, c.leafId, c.title, shared, static_cast<int>(tokens.size())};
      }
    }
  }
  // A conversation "uses" the node when it shares the whole path; a reply
  // without its generated ids is re-tokenized from saved text, which may
  // differ in the last few tokens, so its tail may diverge (a sixteenth).
  std::vector<PrefixMatch> out;
  for (auto& [id, m] : best) {
    if (m.sharedTokens * 16 >= m.requestedTokens * 15) out.push_back(m);
  }
  std::sort(out.begin(), out.end(), [](const PrefixMatch& a, const PrefixMatch& b) {
    return a.sharedTokens > b.sharedTokens;
  });
  emit prefixMatched(tag, out);
}

std::vector<int32_t> EngineWorker::cachedThreadTokens(
    const std::vector<rc::ChatMessage>& messages,
    const std::function<rc::DocumentSet(const std::vector<rc::ChatMessage>&)>& documents) const {
  std::vector<int32_t> tokens;
  if (!engine_ || messages.empty()) return tokens;
  // What the cache holds for a reply is its request's prompt (the thread
  // before it, assistant turn open, its documents placed) followed by the
  // tokens it generated: its ids when known, else its text re-tokenized.
  const rc::ChatMessage& last = messages.back();
  const bool reply = last.role == "assistant";
  std::vector<rc::ChatMessage> prompt(messages.begin(), messages.end() - (reply ? 1 : 0));
  if (documents) {
    rc::GenerateRequest placed;
    placed.messages = prompt;
    const rc::DocumentSet set = documents(prompt);
    if (!set.empty() && rc::place_documents(*engine_, placed, set).ok())
      prompt = std::move(placed.messages);
  }
  Result<std::vector<int32_t>> r = engine_->render_chat(prompt);
  if (!r.ok()) return tokens;
  tokens = std::move(r.value());
  if (!reply) return tokens;
  if (!last.tokens.empty()) {
    tokens.insert(tokens.end(), last.tokens.begin(), last.tokens.end());
  } else if (Result<std::vector<int32_t>> text = engine_->tokenize(last.content, false);
             text.ok()) {
    tokens.insert(tokens.end(), text->begin(), text->end());
  }
  return tokens;
}

void EngineWorker::renderThread(quint64 tag, const std::vector<rc::ChatMessage>& messages) {
  emit threadRendered(tag, cachedThreadTokens(messages));
}

void EngineWorker::runWithEngine(const std::function<void(rc::Engine*)>& task) {
  task(engine_.get());
}

void EngineWorker::releaseRetired(rc::Engine* inUse) {
  for (auto it = retired_.begin(); it != retired_.end();) {
    if (it->get() == inUse) {
      ++it;
    } else {
      destroyEngine(*it);
      it = retired_.erase(it);
    }
  }
}

void EngineWorker::clearTierCache() {
  if (!engine_) return emit tierCacheCleared(tr("No model is loaded."));
  const rc::Status s = engine_->clear_tier_cache();
  emit tierCacheCleared(s.ok() ? QString() : qs(s.message()));
}

void EngineWorker::forget(const std::vector<PrefixCandidate>& gone,
                          const std::vector<PrefixCandidate>& kept) {
  if (!engine_) return emit forgotten(0, 0, tr("No model is loaded."));
  // What the cache holds for each message of each branch (cachedThreadTokens).
  auto render = [&](const std::vector<PrefixCandidate>& branches) {
    std::vector<std::vector<int32_t>> out;
    for (const PrefixCandidate& c : branches) {
      for (size_t end = 1; end <= c.messages.size(); ++end) {
        const std::vector<rc::ChatMessage> upTo(c.messages.begin(), c.messages.begin() + end);
        std::vector<int32_t> tokens = cachedThreadTokens(upTo, c.documents);
        if (!tokens.empty()) out.push_back(std::move(tokens));
      }
    }
    return out;
  };
  const Result<rc::ForgetResult> r = engine_->forget(render(gone), render(kept));
  if (!r.ok()) return emit forgotten(0, 0, qs(r.status().message()));
  emit forgotten(r.value().tree_tokens, r.value().tier_blocks, QString());
}

void EngineWorker::shutdown() {
  for (auto& e : retired_) destroyEngine(e);
  retired_.clear();
  if (engine_) destroyEngine(engine_);
}

void EngineWorker::destroyEngine(std::unique_ptr<rc::Engine>& engine) {
  rc::Engine* raw = engine.get();
  {
    // Detach this engine's requests under the lock, so stop() never calls
    // into an engine being destroyed; the lock is released before the
    // destructor joins, since stream callbacks take it too.
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [tag, a] : active_) {
      if (a.engine == raw) {
        a.engine = nullptr;
        a.stopRequested = true;
      }
    }
  }
  engine.reset();  // joins the engine thread: no callback runs after this
  finishOrphans();
}

void EngineWorker::finishOrphans() {
  std::vector<quint64> orphans;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = active_.begin(); it != active_.end();) {
      // Entries whose engine was cleared by destroyEngine belong to `engine`.
      if (it->second.engine == nullptr && it->second.id != 0) {
        orphans.push_back(it->first);
        it = active_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (quint64 tag : orphans) {
    GenerationOutcome out;
    out.reason = out.metrics.finishReason = QStringLiteral("cancelled");
    out.error = tr("The model was unloaded.");
    emit generationFinished(tag, out);
  }
}

}  // namespace rc::ui
