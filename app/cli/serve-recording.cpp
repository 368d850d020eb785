#include "serve-recording.h"

#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "event-hub.h"
#include "recording/miss-analysis.h"

namespace rc::cli {

namespace {

// Collects each request's generated ids (engine thread) so the recording
// holds prompt and reply, as the cache does.
class RecordingObserver final : public server::RequestObserver {
 public:
  RecordingObserver(recording::Recorder& r, Engine& e) : rec_(r), engine_(e) {}
  void submitted(RequestId id, const GenerateRequest& req) override {
    if (!req.messages.empty()) {
      rec_.request_arrived(id, req.messages);
    } else if (!req.tokens.empty()) {
      rec_.request_arrived(id, req.tokens);
    } else {
      auto t = engine_.tokenize(req.prompt, true);
      rec_.request_arrived(id, t.ok() ? t.value() : std::vector<int32_t>{});
    }
  }
  void event(const StreamEvent& ev) override {
    std::vector<int32_t> out;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& ids = output_[ev.id];
      if (ev.token >= 0) ids.push_back(ev.token);
      if (!ev.finished) return;
      out = std::move(ids);
      output_.erase(ev.id);
    }
    rec_.request_finished(ev.id, ev.metrics, ev.reason, std::move(out));
  }

 private:
  recording::Recorder& rec_;
  Engine& engine_;
  std::mutex mu_;
  std::unordered_map<RequestId, std::vector<int32_t>> output_;
};

}  // namespace

Result<std::unique_ptr<ServeRecording>> ServeRecording::create(const std::string& path, int max_mb,
                                                               bool redact, Engine& engine) {
  std::unique_ptr<ServeRecording> s(new ServeRecording());
  s->engine_ = &engine;
  recording::RecorderOptions ro;
  ro.source = "serve";
  ro.redact = redact;
  ro.max_bytes = int64_t(max_mb) << 20;
  ro.render = [&engine](const std::vector<ChatMessage>& m) { return engine.render_chat(m); };
  ro.on_stop = [](const std::string& why) {
    std::fprintf(stderr, "radixchat-cli: %s\n", why.c_str());
  };
  auto rec = recording::Recorder::create(path, ro);
  if (!rec.ok()) return rec.status();
  s->recorder_ = std::move(rec.value());
  s->recorder_->set_meta("model", engine.model_info().name);
  s->recorder_->set_meta(recording::kClosingTokensMeta,
                         std::to_string(recording::template_closing_tokens(engine)));
  s->observer_ = std::make_shared<RecordingObserver>(*s->recorder_, engine);
  return s;
}

ServeRecording::~ServeRecording() { (void)stop(); }

Status ServeRecording::attach(server::Server& srv) {
  std::shared_ptr<server::EventSubscription> sub = srv.subscribe_events();
  if (!sub) return Status(StatusCode::internal, "--record: no event viewer slot is free");
  Engine& engine = *engine_;
  recording::EventSource src;
  // The hub's attach protocol (event-hub.h): no event after the snapshot
  // is lost, none it reflects is delivered.
  src.snapshot = [sub, &engine] {
    sub->begin_snapshot();
    CacheSnapshot snap = engine.cache_snapshot();
    sub->set_floor(snap.next_seq);
    return snap;
  };
  src.checkpoint = [&engine] { return engine.cache_snapshot(); };
  src.next = [sub](std::vector<CacheEvent>& out, bool* lost, std::chrono::milliseconds timeout) {
    const auto wake = sub->wait(out, timeout);
    if (wake == server::EventSubscription::Wake::resync) *lost = true;
    return wake != server::EventSubscription::Wake::closed;
  };
  tap_ = std::make_unique<recording::EventTap>(*recorder_, std::move(src));
  return {};
}

Status ServeRecording::stop() {
  tap_.reset();
  if (!recorder_) return {};
  Status s = recorder_->close();
  return s;
}

}  // namespace rc::cli
