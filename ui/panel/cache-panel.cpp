#include "panel/cache-panel.h"

#include <QDir>
#include <QFileDialog>
#include <QGuiApplication>
#include <QLabel>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QSurfaceFormat>
#include <QVBoxLayout>
#include <chrono>

#include "chat/save-folder.h"
#include "panel/cache-feed.h"
#include "panel/cache-panel-gl.h"
#include "panel/cache-panel-state.h"

namespace rc::ui {

namespace {

qint64 steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Why ImGui cannot run here, or empty. Platforms without GL integration
// (offscreen, minimal, vnc, ...) fail to make a QOpenGLWidget's context and
// then crash in it, so they are refused by name before anything is tried;
// elsewhere a throwaway context must create, become current and be at
// least OpenGL 3.0 / GLES 3.0 (ImGui's OpenGL3 renderer).
QString gl_unavailable_reason() {
  if (!qEnvironmentVariableIsEmpty("RADIXCHAT_PANEL_NO_GL"))
    return QObject::tr("RADIXCHAT_PANEL_NO_GL is set.");
  const QString platform = QGuiApplication::platformName();
  static const QStringList no_gl = {"offscreen", "minimal", "minimalegl",
                                    "vnc",       "linuxfb", "vkkhrdisplay"};
  if (no_gl.contains(platform))
    return QObject::tr("The Qt platform \"%1\" has no OpenGL.").arg(platform);
  QOpenGLContext ctx;
  ctx.setFormat(QSurfaceFormat::defaultFormat());
  if (!ctx.create()) return QObject::tr("No OpenGL context could be created.");
  QOffscreenSurface surface;
  surface.setFormat(ctx.format());
  surface.create();
  if (!surface.isValid() || !ctx.makeCurrent(&surface))
    return QObject::tr("An OpenGL context was created but cannot be used.");
  const QSurfaceFormat f = ctx.format();
  ctx.doneCurrent();
  if (f.majorVersion() < 3)
    return QObject::tr("OpenGL %1.%2 is too old (the panel needs 3.0).")
        .arg(f.majorVersion())
        .arg(f.minorVersion());
  return {};
}

}  // namespace

CachePanel::CachePanel(QWidget* parent)
    : QWidget(parent), state_(std::make_unique<CachePanelState>()), epoch_ns_(steady_ns()) {
  auto* box = new QVBoxLayout(this);
  box->setContentsMargins(0, 0, 0, 0);
  unavailable_ = gl_unavailable_reason();
  if (unavailable_.isEmpty()) {
    gl_ = new CachePanelGl(
        state_.get(), [this] { return now(); }, this);
    box->addWidget(gl_);
  } else {
    auto* label = new QLabel(this);
    label->setObjectName("cachePanelUnavailable");
    label->setWordWrap(true);
    label->setAlignment(Qt::AlignCenter);
    label->setMargin(24);
    label->setText(tr("<b>The cache tree panel is not available.</b><br><br>%1<br><br>"
                      "It draws with OpenGL, which this display does not offer. "
                      "Chatting works as usual.")
                       .arg(unavailable_.toHtmlEscaped()));
    box->addWidget(label);
  }
  // Signals leave after the ImGui frame that asked for them: a receiver that
  // recreates the engine calls setEngine(), which must not run mid-frame.
  // A remote feed (or, null, the local engine's again) is installed after
  // the frame whose button asked for it, like the settings signal.
  state_->remote.install = [this](std::unique_ptr<panel::CacheFeed> feed) {
    auto held = std::make_shared<std::unique_ptr<panel::CacheFeed>>(std::move(feed));
    QMetaObject::invokeMethod(
        this,
        [this, held] {
          if (*held)
            state_->set_feed(std::move(*held), now());
          else
            state_->set_feed(engine_ ? panel::make_engine_feed(*engine_) : nullptr, now());
          if (gl_) gl_->update();
        },
        Qt::QueuedConnection);
  };
  // A recording's feed (null: the engine's again), like the remote one. A
  // remote cache attached while a recording is shown takes its place.
  auto install = state_->remote.install;
  state_->replay.install = install;
  state_->remote.install = [this, install](std::unique_ptr<panel::CacheFeed> feed) {
    if (feed && state_->replay.shown()) state_->replay.close(false);
    install(std::move(feed));
  };
  state_->replay.pick_file = [this](bool forRecording) {
    QMetaObject::invokeMethod(
        this, [this, forRecording] { pickRecordingFile(forRecording); }, Qt::QueuedConnection);
  };
  state_->on_settings = [this](const std::string& policy, int64_t pool) {
    const QString p = QString::fromStdString(policy);
    QMetaObject::invokeMethod(
        this, [this, p, pool] { emit cacheSettingsRequested(p, pool); }, Qt::QueuedConnection);
  };
  state_->on_lesson_shown = [this](bool shown) {
    QMetaObject::invokeMethod(
        this, [this, shown] { emit lessonShownChanged(shown); }, Qt::QueuedConnection);
  };
  state_->on_conversations = [this](const std::vector<Token>& tokens) {
    std::vector<int32_t> copy(tokens.begin(), tokens.end());
    QMetaObject::invokeMethod(
        this, [this, copy] { emit conversationsForPrefixRequested(copy); }, Qt::QueuedConnection);
  };
}

CachePanel::~CachePanel() {
  // The GL child goes first (it draws from state_); state_ then ends a
  // lesson (its own engine) as it goes.
  delete gl_;
  gl_ = nullptr;
}

double CachePanel::now() const { return double(steady_ns() - epoch_ns_) * 1e-9; }

void CachePanel::setEngine(rc::Engine* engine) {
  if (engine == engine_) return;
  // A recording follows one engine: its seqs restart with the next.
  if (state_->replay.recording()) state_->replay.stop_recording("the model changed");
  engine_ = engine;
  // Detach (or closing a recording) brings this engine's feed back.
  if (state_->remote.attached() || state_->replay.shown()) return;
  state_->set_feed(engine ? panel::make_engine_feed(*engine) : nullptr, now());
  if (gl_) gl_->update();
}

void CachePanel::locateTokens(const std::vector<int32_t>& tokens, int promptTokens,
                              int cachedTokens) {
  panel::LocatedRequest request;
  request.prompt_tokens = promptTokens;
  request.cached_tokens = cachedTokens;
  state_->locate(std::vector<Token>(tokens.begin(), tokens.end()), now(), request);
  if (gl_) gl_->update();
}

void CachePanel::setMissExplainer(panel::MissExplainer explainer) {
  state_->miss_explainer = std::move(explainer);
}

void CachePanel::markContextCut(int droppedMessages, const std::vector<int32_t>& promptTokens,
                                int cachedTokens) {
  state_->mark_context_cut(droppedMessages,
                           std::vector<Token>(promptTokens.begin(), promptTokens.end()),
                           cachedTokens, now());
  if (gl_) gl_->update();
}

void CachePanel::setRemoteConnector(panel::RemoteConnector connector) {
  state_->remote.connector = std::move(connector);
}

QString CachePanel::attachRemote(const panel::AttachRequest& request) {
  return QString::fromStdString(state_->remote.attach(request));
}

void CachePanel::detachRemote() { state_->remote.detach(); }

bool CachePanel::remoteAttached() const { return state_->remote.attached(); }

void CachePanel::setRecordingOpener(panel::RecordingOpener opener) {
  state_->replay.opener = std::move(opener);
}

void CachePanel::setRecordingStarter(panel::RecordingStarter starter) {
  state_->replay.starter = std::move(starter);
}

QString CachePanel::openRecording(const QString& path) {
  if (state_->replay.recording())
    return tr("Stop recording first: the panel shows one tree at a time.");
  const QString why = QString::fromStdString(state_->replay.open(path.toStdString()));
  if (gl_) gl_->update();
  return why;
}

void CachePanel::closeRecording() { state_->replay.close(); }
bool CachePanel::recordingShown() const { return state_->replay.shown(); }

void CachePanel::seekRecording(quint64 seq) {
  state_->replay.playing = false;
  state_->replay.seek(seq);
  if (gl_) gl_->update();
}

quint64 CachePanel::recordingTarget() const { return state_->replay.cursor().target; }
quint64 CachePanel::recordingApplied() const { return state_->replay.cursor().applied; }

QString CachePanel::startRecording(const QString& path) {
  if (!state_->can_record())
    return tr(
        "Record follows the local engine: load a model, and leave the lesson, the remote "
        "cache or the recording.");
  const QString why = QString::fromStdString(state_->replay.start_recording(path.toStdString()));
  if (gl_) gl_->update();
  return why;
}

void CachePanel::stopRecording() {
  state_->replay.stop_recording();
  if (gl_) gl_->update();
}

bool CachePanel::recording() const { return state_->replay.recording(); }
QString CachePanel::recordingStatus() const {
  return QString::fromStdString(state_->replay.record_status());
}

void CachePanel::setTreeExporter(panel::TreeExporter exporter) {
  exporter_ = std::move(exporter);
  state_->replay.export_tree = [this] {
    QMetaObject::invokeMethod(
        this, [this] { pickExportFile(); }, Qt::QueuedConnection);
  };
}

QString CachePanel::exportTree(const QString& path) {
  panel::CacheFeed* feed = state_->feed();
  if (!exporter_) return tr("Exporting pictures is not available in this build.");
  if (!feed) return tr("Nothing to export: no tree is shown.");
  std::string title = feed->describe();
  if (state_->replay_shown())
    title += " at event " + std::to_string(state_->replay.cursor().applied);
  auto label = [feed](const std::vector<Token>& t) { return feed->detokenize(t); };
  return QString::fromStdString(exporter_(state_->shown_tree(), label, title, path.toStdString()));
}

void CachePanel::pickExportFile() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export the cache tree"),
                                   QDir(startFolder(QStandardPaths::PicturesLocation))
                                       .filePath(QStringLiteral("cache-tree.svg")),
                                   tr("SVG picture (*.svg);;PNG image (*.png)"));
  if (path.isEmpty()) return;
  const QString why = exportTree(path);
  if (why.isEmpty()) emit treeExported(path);
  state_->log.note(why.isEmpty() ? "exported the tree to " + path.toStdString()
                                 : "export failed: " + why.toStdString(),
                   now());
  if (gl_) gl_->update();
}

void CachePanel::pickRecordingFile(bool forRecording) {
  const QString filter = tr("Cache recordings (*.rcrec *.db *.sqlite);;All files (*)");
  if (forRecording) {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Record the cache to"),
                                     QDir(startFolder(QStandardPaths::DocumentsLocation))
                                         .filePath(QStringLiteral("cache.rcrec")),
                                     filter);
    if (!path.isEmpty()) startRecording(path);  // the status line says why not
  } else {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a cache recording"), startFolder(QStandardPaths::DocumentsLocation), filter);
    if (!path.isEmpty()) {
      const QString why = openRecording(path);
      if (!why.isEmpty()) state_->replay.open_error = why.toStdString();
    }
  }
  if (gl_) gl_->update();
}

bool CachePanel::hasGl() const { return gl_ != nullptr; }
QString CachePanel::unavailableReason() const { return unavailable_; }
CachePanelState* CachePanel::state() const { return state_.get(); }

float CachePanel::splitShare() const { return state_->frame.user_split; }

void CachePanel::setSplitShare(float share) {
  state_->frame.user_split = share > 0 && share <= 1 ? share : 0;
}

void CachePanel::showConversationsForNode(QStringList titles) {
  state_->tree.conversation_titles.clear();
  for (const QString& t : titles) state_->tree.conversation_titles.push_back(t.toStdString());
  state_->tree.conversations_pending = false;
  if (gl_) gl_->update();
}

}  // namespace rc::ui
