// The app's side of the panel's recordings (docs/architecture.md section 15): ui/panel may not see
// SQLite or app/recording, so the app hands the CachePanel
//
//   - an opener (make_recording_opener): a recording file as a
//     panel::RecordingSource over recording/recording-reader (the tree at
//     any seq: the nearest stored snapshot plus forward replay), with the
//     timeline's samples, miss explanations (recording/miss-analysis, the
//     same as `cache-report`) and the layout advisor (recording/cache-report);
//   - a miss explainer (make_miss_explainer): the same explanation for a
//     live chat message's prompt against the cache now;
//   - a starter (LocalRecorder::starter): Record/Stop of the local engine, a
//     panel::RecordingSink that writes the events the panel drains, engine
//     snapshots and the chat's requests through recording/recorder.h (its
//     writer thread does the disk work) and stops at a size cap, saying so.
//
// Threads: everything here runs on the GUI thread, except what the
// Recorder does on its own writer thread (which never touches the Engine:
// prompts are rendered on the GUI thread before they are queued).
//
// Engine lifetime: a sink keeps the Engine* it was started with. The
// CachePanel stops the recording when its engine changes, before the old
// engine is destroyed (CachePanel::setEngine); a sink destroyed without
// close() (the app quitting) does not touch the engine.
#pragma once

#include <QString>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "panel/recording-access.h"
#include "radixchat/engine.h"

namespace rc::gui {

// The model the app has loaded, to label a recording's tokens.
struct LoadedModel {
  std::string name;  // ModelInfo::name
  std::string path;
  // Its chat template's fixed closing (recording::template_closing_tokens).
  int closing_tokens = 0;
};

// Labels: the vocabulary of meta('model_path') when that file exists, else
// of `current()` when its name is the recording's meta('model'), else the
// bundled model's for a recording of radixchat-demo; otherwise token ids as
// <id>. "Agree again" in the miss explanations leaves out the template's
// closing tokens: the count the recorder wrote, else `current()`'s when it
// made the recording (the live panel's rule). Opening reads the requests
// and replays the recording once for the timeline's samples (a second or
// so per million events).
rc::ui::panel::RecordingOpener make_recording_opener(std::function<LoadedModel()> current = {});

// Why `prompt` misses on `tree`: recording/miss-analysis's explain_miss
// (the same as `cache-report`) with its spans rendered by `text`, as the
// panel shows it. matched_tokens is -1 and at_seq 0: the caller knows them.
// A recording's Request tab and the live panel both come through here.
// closing_tokens: the chat template's fixed closing (MissOptions), 0 unknown.
rc::ui::panel::MissView miss_view(
    const CacheSnapshot& tree, const std::vector<int32_t>& prompt,
    const std::function<std::string(const std::vector<int32_t>&)>& text, int closing_tokens = 0);

// The live panel's "Why it missed" (CachePanel::setMissExplainer): miss_view
// against the snapshot the panel hands it (the cache at the moment the user
// asks), at_seq its next_seq. `closing_tokens` gives the loaded template's
// fixed closing (recording::template_closing_tokens) when asked; empty: 0.
rc::ui::panel::MissExplainer make_miss_explainer(std::function<int()> closing_tokens = {});

// The panel's "Export...": recording/tree-svg's picture of the tree, as SVG,
// or rasterized by recording/tree-png when the path ends in .png. `bos`
// gives the loaded tokenizer's start-of-sequence id (SvgOptions::bos).
rc::ui::panel::TreeExporter make_tree_exporter(std::function<int32_t()> bos = {});

struct LocalRecordingOptions {
  int64_t maxBytes = int64_t(1) << 30;  // the size cap
  int checkpointMs = 2000;              // engine snapshots while events flow
};

// Record/Stop for the app's engine. One recording at a time (the panel's).
class LocalRecorder {
 public:
  // `engine()`: the engine the panel shows (null: none loaded).
  explicit LocalRecorder(std::function<rc::Engine*()> engine, LocalRecordingOptions options = {});
  ~LocalRecorder();
  LocalRecorder(const LocalRecorder&) = delete;
  LocalRecorder& operator=(const LocalRecorder&) = delete;

  rc::ui::panel::RecordingStarter starter();
  bool recording() const;

  // A chat reply on the local engine ended: recorded as a request (prompt
  // rendered from `prompt` by the recording's engine) while a recording
  // runs; ignored otherwise. The recorder ties it to its match event by the
  // cached length, so a prompt cut to fit the context stays unmatched.
  void replyFinished(const std::vector<rc::ChatMessage>& prompt, const rc::RequestMetrics& metrics,
                     const QString& finishReason, std::vector<int32_t> output);

  struct Shared;  // the running sink, shared with it

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace rc::gui
