#include "chat/engine-host.h"

#include <optional>

namespace rc::ui {

EngineHost::EngineHost(QObject* parent) : QObject(parent) {
  qRegisterMetaType<rc::ui::ModelRequest>();
  qRegisterMetaType<rc::ui::ModelDescription>();
  qRegisterMetaType<rc::ui::GenerationOutcome>();
  thread_.setObjectName(QStringLiteral("engine-worker"));
  worker_ = new EngineWorker();
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);

  // Worker -> GUI: queued (the worker and engine threads emit these).
  connect(worker_, &EngineWorker::loadProgress, this, &EngineHost::loadProgress,
          Qt::QueuedConnection);
  connect(
      worker_, &EngineWorker::loadSucceeded, this,
      [this](rc::Engine* engine, const ModelDescription& model) {
        --loading_;
        std::optional<ModelRequest> done;
        if (!pending_.empty()) {
          done = pending_.front();
          pending_.erase(pending_.begin());
        }
        // A later load already queued will close this engine before it
        // opens (a disk tier): the GUI never adopts it.
        for (const ModelRequest& r : pending_)
          if (r.releaseFirst) return;
        if (done) request_ = *done;
        engine_ = engine;
        model_ = model;
        // Users of the old engine switch now; only then is it destroyed.
        emit engineChanged(engine);
        QMetaObject::invokeMethod(
            worker_, [w = worker_, engine] { w->releaseRetired(engine); }, Qt::QueuedConnection);
        emit modelReady(model);
      },
      Qt::QueuedConnection);
  connect(
      worker_, &EngineWorker::engineRestored, this,
      [this](rc::Engine* engine, const ModelDescription& model) {
        // A later load already queued will close it again: not adopted.
        for (size_t i = 1; i < pending_.size(); ++i)
          if (pending_[i].releaseFirst) return;
        engine_ = engine;
        model_ = model;
        emit engineChanged(engine);
      },
      Qt::QueuedConnection);
  connect(
      worker_, &EngineWorker::loadFailed, this,
      [this](const QString& message, bool cancelled) {
        --loading_;
        if (!pending_.empty()) pending_.erase(pending_.begin());
        emit loadFailed(message, cancelled);
      },
      Qt::QueuedConnection);
  connect(worker_, &EngineWorker::textArrived, this, &EngineHost::textArrived,
          Qt::QueuedConnection);
  connect(worker_, &EngineWorker::generationFinished, this, &EngineHost::generationFinished,
          Qt::QueuedConnection);
  connect(worker_, &EngineWorker::warmedUp, this, &EngineHost::warmedUp, Qt::QueuedConnection);
  connect(worker_, &EngineWorker::prefixMatched, this, &EngineHost::prefixMatched,
          Qt::QueuedConnection);
  connect(worker_, &EngineWorker::threadRendered, this, &EngineHost::threadRendered,
          Qt::QueuedConnection);
  connect(worker_, &EngineWorker::tierCacheCleared, this, &EngineHost::tierCacheCleared,
          Qt::QueuedConnection);
  connect(worker_, &EngineWorker::forgotten, this, &EngineHost::forgotten, Qt::QueuedConnection);
  thread_.start();
}

EngineHost::~EngineHost() {
  worker_->cancelLoad(loadSerial_);
  emit engineChanged(nullptr);
  engine_ = nullptr;
  // The only blocking call: the app is closing, and the engines must be
  // destroyed on the thread that owns them before that thread ends.
  QMetaObject::invokeMethod(worker_, &EngineWorker::shutdown, Qt::BlockingQueuedConnection);
  thread_.quit();
  thread_.wait();
}

void EngineHost::load(ModelRequest request) {
  request.serial = ++loadSerial_;
  if (!request.kvDisk.isEmpty() && (engine_ || loading_ > 0)) {
    request.releaseFirst = true;
    if (engine_) {
      emit engineChanged(nullptr);  // its users let go before the worker closes it
      engine_ = nullptr;
    }
  }
  ++loading_;
  pending_.push_back(request);
  emit loadStarted(request);
  QMetaObject::invokeMethod(
      worker_, [w = worker_, request] { w->load(request); }, Qt::QueuedConnection);
}

void EngineHost::clearTierCache() {
  QMetaObject::invokeMethod(
      worker_, [w = worker_] { w->clearTierCache(); }, Qt::QueuedConnection);
}

void EngineHost::forget(const std::vector<PrefixCandidate>& gone,
                        const std::vector<PrefixCandidate>& kept) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, gone, kept] { w->forget(gone, kept); }, Qt::QueuedConnection);
}

void EngineHost::runWithEngine(std::function<void(rc::Engine*)> task) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, task = std::move(task)] { w->runWithEngine(task); },
      Qt::QueuedConnection);
}

void EngineHost::cancelLoad() { worker_->cancelLoad(loadSerial_); }

quint64 EngineHost::generate(const GenerationJob& job) {
  const quint64 tag = nextTag_++;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, tag, job] { w->generate(tag, job); }, Qt::QueuedConnection);
  return tag;
}

void EngineHost::stop(quint64 tag) { worker_->stop(tag); }

void EngineHost::warmup(const QStringList& systemPrompts) {
  QMetaObject::invokeMethod(
      worker_, [w = worker_, systemPrompts] { w->warmup(systemPrompts); }, Qt::QueuedConnection);
}

quint64 EngineHost::matchPrefix(const std::vector<int32_t>& tokens,
                                const std::vector<PrefixCandidate>& candidates) {
  const quint64 tag = nextTag_++;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, tag, tokens, candidates] { w->matchPrefix(tag, tokens, candidates); },
      Qt::QueuedConnection);
  return tag;
}

quint64 EngineHost::renderThread(const std::vector<rc::ChatMessage>& messages) {
  const quint64 tag = nextTag_++;
  QMetaObject::invokeMethod(
      worker_, [w = worker_, tag, messages] { w->renderThread(tag, messages); },
      Qt::QueuedConnection);
  return tag;
}

}  // namespace rc::ui
