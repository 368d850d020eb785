// Record/Stop of the local engine (recording-source.h): the panel's
// RecordingSink over a recording::Recorder.
#include <QFileInfo>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "panel/label-text.h"
#include "recording-source.h"
#include "recording/miss-analysis.h"
#include "recording/recorder.h"

namespace rc::gui {

namespace {

using Clock = std::chrono::steady_clock;

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1 << 20));
  return buf;
}

}  // namespace

class PanelSink;

struct LocalRecorder::Shared {
  std::function<rc::Engine*()> engine;
  LocalRecordingOptions options;
  PanelSink* current = nullptr;  // GUI thread
};

class PanelSink : public rc::ui::panel::RecordingSink {
 public:
  PanelSink(std::shared_ptr<LocalRecorder::Shared> shared, rc::Engine* engine,
            std::unique_ptr<recording::Recorder> rec, std::shared_ptr<std::atomic<bool>> capped)
      : shared_(std::move(shared)),
        engine_(engine),
        rec_(std::move(rec)),
        capped_(std::move(capped)) {
    name_ = QFileInfo(QString::fromStdString(rec_->path())).fileName().toStdString();
    snapshot();
    shared_->current = this;
  }

  ~PanelSink() override {
    if (shared_->current == this) shared_->current = nullptr;
    // Without close(): the engine may be gone already, so no last snapshot.
    if (!closed_) (void)rec_->close();
  }

  void events(const std::vector<CacheEvent>& batch, bool overflowed) override {
    if (closed_ || rec_->stopped()) return;
    // The first event the snapshot does not hold must follow it: a later
    // one means the panel missed some (it showed another tree meanwhile).
    auto fresh = std::find_if(batch.begin(), batch.end(),
                              [&](const CacheEvent& e) { return e.seq >= next_expected_; });
    const bool skipped = fresh != batch.end() && fresh->seq > next_expected_;
    if (overflowed || skipped) {
      rec_->events({}, true,
                   overflowed ? "the panel's event queue overflowed"
                              : "the panel did not follow the engine for a while");
      snapshot();
      return;
    }
    if (fresh == batch.end()) return;
    events_ += uint64_t(batch.end() - fresh);
    next_expected_ = batch.back().seq + 1;
    rec_->events(std::vector<CacheEvent>(fresh, batch.end()));
    if (rec_->wants_snapshot()) {
      snapshot();
    } else if (Clock::now() - last_snapshot_ >=
               std::chrono::milliseconds(shared_->options.checkpointMs)) {
      rec_->snapshot(engine_->cache_snapshot());  // a checkpoint: seeking lands near it
      last_snapshot_ = Clock::now();
    }
  }

  void request(const std::vector<rc::ChatMessage>& prompt, const rc::RequestMetrics& metrics,
               rc::FinishReason reason, std::vector<int32_t> output) {
    if (closed_ || rec_->stopped()) return;
    auto tokens = engine_->render_chat(prompt);
    if (!tokens.ok()) return;
    const uint64_t id = ++requests_;
    rec_->request_arrived(id, std::move(tokens.value()));
    rec_->request_finished(id, metrics, reason, std::move(output));
  }

  std::string status() const override {
    if (!error_.empty()) return "recording " + name_ + " failed: " + error_;
    const recording::RecorderStats s = rec_->stats();
    const std::string counts = rc::ui::panel::plural(int64_t(s.events), "event") + ", " +
                               rc::ui::panel::plural(int64_t(requests_), "request") + ", " +
                               mib(s.bytes);
    if (capped_->load())
      return "Recording stopped: " + name_ + " reached its size cap of " +
             mib(shared_->options.maxBytes) + "; everything up to there is saved (" + counts + ").";
    if (rec_->stopped()) return "Recording stopped: " + rec_->stop_message() + " (" + counts + ")";
    return (closed_ ? "Recorded to " : "Recording to ") + name_ + ": " + counts;
  }

  bool stopped() const override { return closed_ || rec_->stopped(); }

  std::string close() override {
    if (closed_) return error_;
    if (!rec_->stopped()) rec_->snapshot(engine_->cache_snapshot());
    const Status s = rec_->close();
    closed_ = true;
    if (shared_->current == this) shared_->current = nullptr;
    if (!s.ok()) error_ = s.message();
    return error_;
  }

 private:
  void snapshot() {
    CacheSnapshot snap = engine_->cache_snapshot();
    next_expected_ = snap.next_seq;
    rec_->snapshot(std::move(snap));
    last_snapshot_ = Clock::now();
  }

  std::shared_ptr<LocalRecorder::Shared> shared_;
  rc::Engine* engine_;
  std::unique_ptr<recording::Recorder> rec_;
  std::shared_ptr<std::atomic<bool>> capped_;  // set on the writer thread
  std::string name_;
  uint64_t next_expected_ = 0;
  uint64_t events_ = 0;
  uint64_t requests_ = 0;
  Clock::time_point last_snapshot_;
  bool closed_ = false;
  std::string error_;
};

LocalRecorder::LocalRecorder(std::function<rc::Engine*()> engine, LocalRecordingOptions options)
    : shared_(std::make_shared<Shared>()) {
  shared_->engine = std::move(engine);
  shared_->options = options;
}

LocalRecorder::~LocalRecorder() = default;

bool LocalRecorder::recording() const {
  return shared_->current != nullptr && !shared_->current->stopped();
}

rc::ui::panel::RecordingStarter LocalRecorder::starter() {
  std::shared_ptr<Shared> shared = shared_;
  return
      [shared](const std::string& path) -> Result<std::unique_ptr<rc::ui::panel::RecordingSink>> {
        rc::Engine* engine = shared->engine ? shared->engine() : nullptr;
        if (!engine)
          return Status(StatusCode::invalid_argument, "Load a model first: nothing to record.");
        if (shared->current)
          return Status(StatusCode::invalid_argument, "A recording is already running.");
        std::error_code ec;
        if (std::filesystem::exists(path, ec))
          std::filesystem::remove(path, ec);  // the file dialog asked before replacing it
        recording::RecorderOptions ro;
        ro.source = "panel";
        ro.max_bytes = shared->options.maxBytes;
        auto capped = std::make_shared<std::atomic<bool>>(false);
        ro.on_stop = [capped](const std::string& why) {
          if (why.find("size cap") != std::string::npos) capped->store(true);
        };
        auto rec = recording::Recorder::create(path, ro);
        if (!rec.ok())
          return Status(rec.status().code(),
                        "Cannot record to " + path + ": " + rec.status().message());
        const ModelInfo& info = engine->model_info();
        (*rec)->set_meta("model", info.name);
        (*rec)->set_meta("model_path", info.path);
        // "Agree again" in the Request tab and cache-report as in the live panel.
        (*rec)->set_meta(recording::kClosingTokensMeta,
                         std::to_string(recording::template_closing_tokens(*engine)));
        return std::unique_ptr<rc::ui::panel::RecordingSink>(
            new PanelSink(shared, engine, std::move(rec.value()), capped));
      };
}

void LocalRecorder::replyFinished(const std::vector<rc::ChatMessage>& prompt,
                                  const rc::RequestMetrics& metrics, const QString& finishReason,
                                  std::vector<int32_t> output) {
  PanelSink* sink = shared_->current;
  if (!sink) return;
  rc::FinishReason reason = rc::FinishReason::none;
  for (rc::FinishReason r : {rc::FinishReason::stop, rc::FinishReason::length,
                             rc::FinishReason::cancelled, rc::FinishReason::error})
    if (finishReason == QLatin1String(rc::finish_reason_name(r))) reason = r;
  sink->request(prompt, metrics, reason, std::move(output));
}

}  // namespace rc::gui
