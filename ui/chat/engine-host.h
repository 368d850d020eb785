// EngineHost: the GUI thread's handle on the engine worker.
//
// Owns a QThread and the EngineWorker living on it; every call here returns
// at once (the work is queued to the worker), except the destructor, which
// cancels what runs and waits for the worker to destroy its engines (the
// app is closing then).
//
// Thread: GUI thread only (create, call and destroy it there). Its signals
// are delivered on the GUI thread.
//
// Engine pointer contract: engine() is the engine the worker owns now, or
// nullptr. engineChanged(e) is emitted BEFORE the previous engine is
// destroyed, so a receiver that keeps the pointer (the cache panel) must
// switch to `e` in the slot, synchronously. The destructor emits
// engineChanged(nullptr) first.
#pragma once

#include <QObject>
#include <QThread>
#include <functional>
#include <vector>

#include "chat/engine-worker.h"

namespace rc::ui {

class EngineHost : public QObject {
  Q_OBJECT
 public:
  explicit EngineHost(QObject* parent = nullptr);
  ~EngineHost() override;

  // Starts loading; the current engine keeps serving until the new one is
  // ready. A second load() while one runs is queued behind it. Except with
  // a disk tier (request.kvDisk): its folder takes one engine at a time, so
  // engineChanged(nullptr) is emitted at once and the old engine is closed
  // before the new one opens; if the new one fails, the old one is opened
  // again and engineChanged(it) comes before loadFailed.
  void load(ModelRequest request);
  // Empties the current engine's host and disk tiers; tierCacheCleared
  // follows (empty error: done).
  void clearTierCache();
  // Cancels every load requested so far (running or queued).
  void cancelLoad();
  bool isLoading() const { return loading_ > 0; }

  rc::Engine* engine() const { return engine_; }
  bool hasModel() const { return engine_ != nullptr; }
  const ModelDescription& model() const { return model_; }
  const ModelRequest& modelRequest() const { return request_; }  // of the loaded model

  // Queues a generation and returns its tag (> 0); textArrived and
  // generationFinished carry that tag. Always finishes exactly once.
  quint64 generate(const GenerationJob& job);
  void stop(quint64 tag);
  void warmup(const QStringList& systemPrompts);
  // Results come back as prefixMatched / threadRendered with the tag.
  quint64 matchPrefix(const std::vector<int32_t>& tokens,
                      const std::vector<PrefixCandidate>& candidates);
  quint64 renderThread(const std::vector<rc::ChatMessage>& messages);
  // Forgets what only the `gone` branches used (a deleted conversation):
  // their tree nodes and tier blocks, keeping what a `kept` branch shares
  // (Engine::forget). forgotten follows.
  void forget(const std::vector<PrefixCandidate>& gone, const std::vector<PrefixCandidate>& kept);

  // Runs `task` on the worker thread, queued behind the work before it,
  // with the engine current there (nullptr without a model); the engine
  // outlives the call. `task` reports back itself (a queued invokeMethod).
  void runWithEngine(std::function<void(rc::Engine*)> task);

  EngineWorker* worker() const { return worker_; }  // for tests

 signals:
  void loadStarted(const rc::ui::ModelRequest& request);
  void loadProgress(double fraction);
  void engineChanged(rc::Engine* engine);
  void modelReady(const rc::ui::ModelDescription& model);
  void loadFailed(const QString& message, bool cancelled);
  void textArrived(quint64 tag, const QString& text);
  void generationFinished(quint64 tag, const rc::ui::GenerationOutcome& outcome);
  void warmedUp(int count, const QString& error);
  void prefixMatched(quint64 tag, const std::vector<rc::ui::PrefixMatch>& matches);
  void threadRendered(quint64 tag, const std::vector<int32_t>& tokens);
  void tierCacheCleared(const QString& error);
  // Tokens dropped from the tree and blocks erased from the tiers, or why not.
  void forgotten(qint64 treeTokens, qint64 tierBlocks, const QString& error);

 private:
  QThread thread_;
  EngineWorker* worker_ = nullptr;  // lives on thread_; deleted there
  rc::Engine* engine_ = nullptr;
  ModelDescription model_;
  ModelRequest request_;
  std::vector<ModelRequest> pending_;  // loads queued, oldest first
  int loading_ = 0;
  quint64 nextTag_ = 1;
  quint64 loadSerial_ = 0;  // serial of the latest load()
};

}  // namespace rc::ui
