// EngineWorker: the one place the GUI talks to rc::Engine (docs/architecture.md section 16).
//
// Threads:
//   - An EngineWorker lives on its own QThread (EngineHost makes it). Its
//     slots load(), generate(), warmup(), matchPrefix(), renderThread(),
//     releaseRetired() and shutdown() run there, one at a time; create a
//     model, warm up and render may take seconds and never block the GUI.
//   - stop() and cancelLoad() may be called from any thread: they only flip
//     atomics and call Engine::cancel (thread-safe).
//   - textArrived and generationFinished are emitted on the ENGINE thread
//     (from the stream callback); connect them with Auto/Queued connections
//     so receivers on the GUI thread get them queued, in order.
//   - All other signals are emitted on the worker thread.
//
// Ownership: the worker owns the Engine. A successful load() keeps the
// previous engine alive ("retired") until releaseRetired(): the GUI first
// hands the new pointer to its users (the cache panel), then asks for the
// old ones to be destroyed. shutdown() destroys them all. A request still running
// on a destroyed engine is reported finished with reason "cancelled".
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "chat/chat-types.h"
#include "radixchat/context-fit.h"
#include "radixchat/documents.h"
#include "radixchat/engine.h"

namespace rc::ui {

struct ModelRequest {
  QString path;  // empty: the bundled model (rc::default_model_path, honours $RADIXCHAT_MODEL)
  QString cachePolicy = QStringLiteral("radix");
  qint64 poolTokens = 0;                   // 0: the engine's default
  QString kvType = QStringLiteral("f16");  // f16 | bf16 | f32 (EngineConfig::kv_type)
  int threads = 0;                         // 0: all cores
  bool drafted = false;                    // drafted decoding (EngineConfig::speculate "tree")
  // Cache tiers below the pool (EngineConfig::kv_disk, kv_disk_bytes,
  // kv_redis). kvDisk: a folder, "default" ($XDG_CACHE_HOME/radixchat/kv) or
  // empty (none). A folder that another process holds (or that cannot be
  // made) is left out: the engine opens without the disk tier and
  // ModelDescription::tierNotice says so.
  QString kvDisk;
  qint64 kvDiskBytes = qint64(2) << 30;
  QString kvRedis;
  // Set by EngineHost when kvDisk is set and an engine exists: the disk
  // folder is locked by whoever opened it, this process's engines included,
  // so the worker destroys its engines before creating the new one.
  bool releaseFirst = false;
  quint64 serial = 0;  // set by EngineHost: cancelLoad(n) cancels serials <= n
};

struct ModelDescription {
  QString name;
  QString path;
  QString architecture;
  QString backend;        // cpu | cuda
  QString device;         // "CPU (2 threads)" or the GPU's name
  QString backendReason;  // why that backend
  QString cachePolicy;
  qint64 poolTokens = 0;
  QString kvType;  // "F16", "BF16" or "F32"
  int contextLength = 0;
  QString chatTemplate;        // name (qwen3, chatml, ...)
  QString chatTemplateDetail;  // how it was chosen
  QString chatTemplateNotice;  // set when the model's own template was not recognised
  bool reasoning = false;      // replies open with a <think> block
  bool bundled = false;        // loaded from the default path
  rc::RecommendedSampling sampling;  // the model file's recommendation (may be empty)
  // Set when the disk tier was asked for but left out (its folder is in use
  // by another process, e.g. a second window of the app): one line.
  QString tierNotice;
};

struct GenerationJob {
  std::vector<rc::ChatMessage> messages;  // system (optional) .. last user message
  rc::SamplingParams sampling;
  int maxTokens = 1024;
  int contextLength = 0;  // 0: the model's; else min(this, the model's)
  rc::ContextPolicy contextPolicy = rc::ContextPolicy::rolling_window;  // when it does not fit
  // Documents to answer from (docs/architecture.md section 21): laid out by
  // rc::place_documents into the system message before the fit; empty: none.
  rc::DocumentSet documents;
};

struct GenerationOutcome {
  QString reason;  // stop | length | cancelled | error
  QString error;   // one line, when reason == error
  ReplyMetrics metrics;
  int droppedMessages = 0;     // oldest messages left out to fit the context
  bool prefixChanged = false;  // the cut moved this turn: the cached history stopped matching
  // The ids the reply was generated as (streamed tokens, end-of-generation
  // excluded): saved with the reply so the next prompt holds exactly them.
  std::vector<int32_t> tokens;
  // The prompt sent, when a context cut changed it (prefixChanged): the
  // cache panel marks where it leaves the cached path. Empty otherwise.
  std::vector<int32_t> promptTokens;
};

// A conversation branch offered to matchPrefix().
struct PrefixCandidate {
  qint64 conversationId = 0;
  qint64 leafId = 0;
  QString title;
  std::vector<rc::ChatMessage> messages;
  // The documents each request of this branch was sent with, for its
  // messages before the reply (docs/architecture.md section 21); unset: none.
  // Called on the worker thread.
  std::function<rc::DocumentSet(const std::vector<rc::ChatMessage>&)> documents;
};

struct PrefixMatch {
  qint64 conversationId = 0;
  qint64 leafId = 0;
  QString title;
  int sharedTokens = 0;  // longest common prefix with the requested tokens
  int requestedTokens = 0;
};

class EngineWorker : public QObject {
  Q_OBJECT
 public:
  EngineWorker();
  ~EngineWorker() override;  // shutdown()

  // Any thread. Stops the request `tag`: the stream callback returns false
  // from its next event and Engine::cancel drops it if it is still queued
  // or prefilling. Finishes with reason "cancelled". Unknown tags: ignored.
  void stop(quint64 tag);
  // Any thread. Cancels the loads with serial <= upTo, running or still
  // queued (load_progress returns false; they fail as "cancelled").
  void cancelLoad(quint64 upTo);

 public slots:
  // Worker thread. Creates an engine; on success the old one is retired.
  void load(const rc::ui::ModelRequest& request);
  // Worker thread. Places job.documents (rc::place_documents), fits the
  // conversation into the context with
  // rc::fit_context under job.contextPolicy (whole old turns dropped in
  // steps, so the kept history hits the cache) and submits. Never blocks on
  // generation.
  void generate(quint64 tag, const rc::ui::GenerationJob& job);
  // Worker thread. Engine::warmup of each non-empty system prompt (pinned).
  void warmup(const QStringList& systemPrompts);
  // Worker thread. Each candidate's messages, rendered as cachedThreadTokens
  // one message at a time, compared with `tokens`.
  void matchPrefix(quint64 tag, const std::vector<int32_t>& tokens,
                   const std::vector<rc::ui::PrefixCandidate>& candidates);
  // Worker thread. The tokens the cache holds for the last message, for the
  // panel's locateTokens: a user message's request prompt (render_chat,
  // assistant turn open); for a reply, its request prompt + its text.
  void renderThread(quint64 tag, const std::vector<rc::ChatMessage>& messages);
  // Worker thread. Runs `task` with the current engine (nullptr without
  // one), which stays alive until it returns: document work that needs the
  // model's tokenizer or prefills (adding to the library, warming).
  void runWithEngine(const std::function<void(rc::Engine*)>& task);
  // Destroys the retired engines except `inUse` (the one the GUI switched
  // to; it may lag behind when loads overlap).
  void releaseRetired(rc::Engine* inUse);
  // Worker thread. Engine::clear_tier_cache on the current engine (the host
  // and disk tiers; a shared Redis is left alone); tierCacheCleared follows
  // with an empty error on success.
  void clearTierCache();
  // Worker thread. Engine::forget of every message of the `gone` branches,
  // each rendered as cachedThreadTokens, keeping every message of `kept`;
  // forgotten follows (with an error when no model is loaded).
  void forget(const std::vector<rc::ui::PrefixCandidate>& gone,
              const std::vector<rc::ui::PrefixCandidate>& kept);
  void shutdown();

 signals:
  void loadProgress(double fraction);
  void loadSucceeded(rc::Engine* engine, const rc::ui::ModelDescription& model);
  void loadFailed(const QString& message, bool cancelled);
  // A load with releaseFirst failed: the engine it closed was opened again
  // (emitted just before that loadFailed); the GUI switches back to it.
  void engineRestored(rc::Engine* engine, const rc::ui::ModelDescription& model);
  void textArrived(quint64 tag, const QString& text);
  void generationFinished(quint64 tag, const rc::ui::GenerationOutcome& outcome);
  void warmedUp(int count, const QString& error);
  void prefixMatched(quint64 tag, const std::vector<rc::ui::PrefixMatch>& matches);
  void threadRendered(quint64 tag, const std::vector<int32_t>& tokens);
  void tierCacheCleared(const QString& error);
  void forgotten(qint64 treeTokens, qint64 tierBlocks, const QString& error);

 private:
  struct Active {
    rc::Engine* engine = nullptr;
    rc::RequestId id = 0;  // 0: not submitted yet
    bool stopRequested = false;
  };
  // Reports the requests detached by destroyEngine() and never finished as
  // cancelled; called once the engine is gone (no callback can run any more).
  void finishOrphans();
  // The tokens the cache holds for the last of `messages` (renderThread).
  // `documents`, when set, gives the documents the prompt was sent with:
  // they are placed as the request placed them.
  std::vector<int32_t> cachedThreadTokens(
      const std::vector<rc::ChatMessage>& messages,
      const std::function<rc::DocumentSet(const std::vector<rc::ChatMessage>&)>& documents = {})
      const;
  void destroyEngine(std::unique_ptr<rc::Engine>& engine);
  // Engine::create for `request`; a disk folder it cannot use (in use by
  // another process, not writable) is left out, and *tierNotice says so.
  Result<std::unique_ptr<rc::Engine>> create(const ModelRequest& request,
                                             const std::function<bool(float)>& progress,
                                             QString* tierNotice);

  std::unique_ptr<rc::Engine> engine_;                // worker thread
  ModelRequest current_;                              // engine_'s request (worker thread)
  std::vector<std::unique_ptr<rc::Engine>> retired_;  // worker thread; until the GUI lets go
  std::atomic<quint64> cancelUpTo_{0};
  std::mutex mu_;                     // guards active_ (GUI, worker, engine threads)
  std::map<quint64, Active> active_;  // tag -> request
  quint64 lastTagSeen_ = 0;           // guarded by mu_; tags only grow
};

}  // namespace rc::ui

Q_DECLARE_METATYPE(rc::ui::ModelRequest)
Q_DECLARE_METATYPE(rc::ui::ModelDescription)
Q_DECLARE_METATYPE(rc::ui::GenerationJob)
Q_DECLARE_METATYPE(rc::ui::GenerationOutcome)
Q_DECLARE_METATYPE(rc::ui::PrefixCandidate)
Q_DECLARE_METATYPE(rc::ui::PrefixMatch)
