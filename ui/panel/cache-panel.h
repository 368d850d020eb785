// CachePanel: the live radix-tree panel beside the chat.
//
// A QWidget the chat window embeds. Inside it is either
//   - a QOpenGLWidget hosting Dear ImGui 1.86 that draws the engine's KV
//     cache tree, stats, plots, event log and teaching controls, when this
//     platform can create an OpenGL context (xcb/wayland; not offscreen,
//     minimal, vnc), or
//   - a QLabel saying why the panel is unavailable. The chat keeps working.
//
// Threading: every method and slot runs on the GUI thread. The panel reads
// the engine only through its public, thread-safe API (cache_snapshot(),
// drain_events(), stats(), model_info(), detokenize(), submit() for the demo
// scenarios) and never touches engine internals. It drains cache events once
// per frame (~60 Hz) and resyncs from a snapshot on overflow or a seq gap.
//
// Ownership: the panel does not own the Engine. The owner must call
// setEngine(nullptr) (or destroy the panel) before destroying the Engine.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>
#include <cstdint>
#include <memory>
#include <vector>

#include "panel/recording-access.h"
#include "panel/remote-attach.h"

namespace rc {
class Engine;
}

namespace rc::ui {

class CachePanelGl;  // the GL host (cache-panel-gl.h); absent without GL
struct CachePanelState;

class CachePanel : public QWidget {
  Q_OBJECT
 public:
  explicit CachePanel(QWidget* parent = nullptr);
  ~CachePanel() override;

  // GUI thread. nullptr = no model loaded (the panel shows an empty tree and
  // says so). A non-null engine resyncs the panel from a fresh snapshot; the
  // same engine again is a no-op. After a cache policy or pool change the
  // owner recreates the Engine and calls setEngine with the new one.
  void setEngine(rc::Engine* engine);

  // Highlight the path of a chat message's prompt (its rendered tokens, e.g.
  // Engine::render_chat(conversation up to that message)): the deepest node
  // whose path is a prefix of `tokens` is selected and the view pans to it.
  // Empty clears the highlight.
  // With an explainer (setMissExplainer), the Node tab also says why the
  // message's request misses against the cache now, under the located node
  // (CachePanelState::explain_located). `promptTokens`: its request's prompt
  // is the first N of `tokens` (a reply's tokens add its text); with
  // `cachedTokens` (served from the cache when it ran) what the request
  // itself added is left out of the cache it is compared with. -1: unknown.
  void locateTokens(const std::vector<int32_t>& tokens, int promptTokens = -1,
                    int cachedTokens = -1);
  // The app's explainer (recording/miss-analysis behind it); without one,
  // no "Why it missed" section.
  void setMissExplainer(panel::MissExplainer explainer);

  // Marks that a chat's prompt was cut to fit the context (the earliest
  // `droppedMessages` messages left it and the cached prefix changed): a
  // line in the Events log and a banner for a few seconds, so the miss that
  // follows is explained. With the prompt sent (`promptTokens`, its first
  // `cachedTokens` served from the cache) the node where it leaves the
  // cached path gets a "context cut" badge until the next cut.
  void markContextCut(int droppedMessages, const std::vector<int32_t>& promptTokens = {},
                      int cachedTokens = 0);

  // Remote caches. The app supplies the connector (it owns ZeroMQ
  // and HTTP, app/kv-events); without one the panel has no "Attach to a
  // cache..." control. attachRemote() does what the control does and
  // returns "" or why it failed; the remote tree replaces the engine's after
  // the current frame. detachRemote() returns to the engine set last.
  void setRemoteConnector(panel::RemoteConnector connector);
  QString attachRemote(const panel::AttachRequest& request);
  void detachRemote();
  bool remoteAttached() const;

  // Recordings. The app supplies the opener (a recording file as
  // a RecordingSource) and the starter (Record/Stop of the local engine);
  // without them the panel has no "Open recording..." / "Record..."
  // controls. The buttons ask for a file with a QFileDialog (queued after
  // the frame); the methods below do what the controls do, for tests and
  // the app. openRecording() returns "" or why it failed; the recording's
  // tree replaces the engine's after the current frame and the engine's
  // comes back on closeRecording(). startRecording() records the engine
  // set last into `path` (replacing a file there: the dialog asked first)
  // and returns "" or why not; the recording also stops when the engine
  // changes (setEngine).
  void setRecordingOpener(panel::RecordingOpener opener);
  void setRecordingStarter(panel::RecordingStarter starter);
  QString openRecording(const QString& path);
  void closeRecording();
  bool recordingShown() const;
  // Moves the shown recording's cursor: the tree after every event before
  // `seq` (clamped to the recording), built in the next frame.
  void seekRecording(quint64 seq);
  // The seq asked for, and the one the panel's tree is at (equal once built).
  quint64 recordingTarget() const;
  quint64 recordingApplied() const;
  QString startRecording(const QString& path);
  void stopRecording();
  bool recording() const;
  QString recordingStatus() const;
  // Export (the app's tree-svg / tree-png): without an exporter no "Export..."
  // control. exportTree() writes the tree shown now (live, remote, or the
  // recording at its cursor) to `path`, SVG or PNG by its extension, and
  // returns "" or why not.
  void setTreeExporter(panel::TreeExporter exporter);
  QString exportTree(const QString& path);

  // The tabs' share of the panel's height below the tree, once the user
  // dragged the bar between them (0: never; the panel picks). The app
  // saves it and gives it back on the next launch.
  float splitShare() const;
  void setSplitShare(float share);

  // True when the ImGui panel is live (a GL context could be created); false
  // when the placeholder message is shown instead.
  bool hasGl() const;
  // Why GL is unavailable (empty when hasGl()).
  QString unavailableReason() const;

  // For tests and the app's --screenshot: the panel's own model, layout and
  // drawing state (cache-panel-state.h). Never null.
  CachePanelState* state() const;
  // The GL host (cache-panel-gl.h), or null when the placeholder is shown.
  CachePanelGl* glWidget() const { return gl_; }

 signals:
  // The user changed the cache policy or pool size in the panel. `policy` is
  // radix | radix-page16 | hash16 | off; `poolTokens` is the KV pool size in
  // tokens (0 = the engine's default). The owner recreates the engine.
  void cacheSettingsRequested(QString policy, qint64 poolTokens);
  // The user asked which conversations use a node: `tokens` is the full
  // token path from the root to the end of that node. The owner answers
  // with showConversationsForNode().
  void conversationsForPrefixRequested(std::vector<int32_t> tokens);
  // A lesson's own tree replaced the user's (true), or the user's came back
  // (false): the window may give the panel more room meanwhile.
  void lessonShownChanged(bool shown);
  // The tree was saved as a picture at `path` (the panel's Export button).
  void treeExported(const QString& path);

 public slots:
  // Titles of the conversations whose rendered prompts start with the
  // requested prefix; shown in the selected node's details.
  void showConversationsForNode(QStringList titles);

 private:
  double now() const;                         // seconds since the panel was made
  void pickRecordingFile(bool forRecording);  // the file dialog, after the frame
  void pickExportFile();                      // likewise
  panel::TreeExporter exporter_;

  std::unique_ptr<CachePanelState> state_;
  CachePanelGl* gl_ = nullptr;  // child widget, owned by Qt; null without GL
  QString unavailable_;
  rc::Engine* engine_ = nullptr;
  qint64 epoch_ns_ = 0;
};

}  // namespace rc::ui
