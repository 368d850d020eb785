// MainWindow: layout, menus and shortcuts, status bar, settings. The
// reactions to the controller, the engine and the panel are in
// main-window-actions.cpp.
#include "main-window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>

#include "chat/chat-view.h"
#include "chat/composer.h"
#include "chat/conversation-sidebar.h"
#include "chat/engine-host.h"
#include "document-controller.h"
#include "elided-label.h"
#include "get-model-dialog.h"
#include "model-picker.h"
#include "panel/cache-panel.h"
#include "remote-cache-source.h"
#include "welcome.h"

namespace rc::gui {

MainWindow::MainWindow(rc::store::StoreThread* store, const WindowOptions& options, QWidget* parent)
    : QMainWindow(parent), options_(options), welcome_(options.welcome) {
  setWindowTitle(tr("RadixChat"));
  settings_ = options.settingsFile.isEmpty()
                  ? std::make_unique<QSettings>()
                  : std::make_unique<QSettings>(options.settingsFile, QSettings::IniFormat);
  engine_ = std::make_unique<rc::ui::EngineHost>();
  controller_ = std::make_unique<ChatController>(store, engine_.get());
  makeDocuments(store);

  buildLayout();
  buildMenus();
  buildStatusBar();
  connectController();
  connectEngine();
  connectPanel();
  qApp->installEventFilter(this);

  resize(firstLaunchSize());
  if (settings_->contains(QStringLiteral("window/geometry"))) {
    restoreGeometry(settings_->value(QStringLiteral("window/geometry")).toByteArray());
  }
  fitToScreen();
  if (settings_->contains(QStringLiteral("window/splitter"))) {
    splitter_->restoreState(settings_->value(QStringLiteral("window/splitter")).toByteArray());
    splitterByUser_ = true;
  } else {
    applyDefaultSplit();
  }
  // The setting, not panel_->isVisible(): the window is not shown yet, so
  // the panel reads as hidden whatever it was told.
  const bool panelShown = settings_->value(QStringLiteral("window/panel"), true).toBool();
  panelAction_->setChecked(panelShown);
  panel_->setVisible(panelShown);
  panel_->setSplitShare(settings_->value(QStringLiteral("window/panelSplit"), 0.0).toFloat());
  picker_->setRecent(settings_->value(QStringLiteral("models/recent")).toStringList());
  updateHeader();
  updateComposerState();
}

QSize MainWindow::firstLaunchSize() const {
  const QSize least(1280, 800);
  const QScreen* s = screen();
  if (!s) return least;
  const QSize avail = s->availableGeometry().size();
  return least.expandedTo(avail * 0.85).boundedTo(avail);
}

void MainWindow::fitToScreen() {
  QScreen* s = screen();
  if (!s) return;
  // A saved or default size larger than this screen (a laptop, a projector)
  // would put the composer and the status bar off it.
  const QRect avail = s->availableGeometry();
  const QSize frame = frameGeometry().size() - size();
  const QSize room = (avail.size() - frame).expandedTo(minimumSizeHint());
  if (size().width() > room.width() || size().height() > room.height())
    resize(size().boundedTo(room));
  QRect g = frameGeometry();
  g.moveRight(std::min(g.right(), avail.right()));
  g.moveBottom(std::min(g.bottom(), avail.bottom()));
  g.moveLeft(std::max(g.left(), avail.left()));
  g.moveTop(std::max(g.top(), avail.top()));
  if (g.topLeft() != frameGeometry().topLeft()) move(g.topLeft());
}

int panelDefaultWidth(int total, int sidebar) {
  const int rest = total - sidebar;
  const int wide = rest * 47 / 100;
  // The chat keeps at least 600 px; below that the panel keeps its 380.
  return rest - wide >= 600 ? std::max(wide, 380) : 380;
}

void MainWindow::applyDefaultSplit() {
  QList<int> sizes = splitter_->sizes();
  if (splitterByUser_ || lessonWide_ || sizes.size() != 3 || !panel_->isVisibleTo(this)) return;
  const int total = sizes[0] + sizes[1] + sizes[2];
  if (total <= 0) return;
  const int panel = panelDefaultWidth(total, sizes[0]);
  if (std::abs(sizes[2] - panel) <= 1) return;
  sizes[1] = total - sizes[0] - panel;
  sizes[2] = panel;
  splitter_->setSizes(sizes);
}

MainWindow::~MainWindow() {
  qApp->removeEventFilter(this);
  // See the header: controller, then engine (panel lets go first), then widgets.
  chatView_->setModel(nullptr);
  sidebar_->setModel(nullptr);
  controller_.reset();
  engine_.reset();
  // After the engine host: its worker's queued document tasks call back
  // into the documents' controller.
  documents_.reset();
}

void MainWindow::start() {
  controller_->start();
  composer_->focusInput();  // type right away; Enter sends once the model is in
  QString path = settings_->value(QStringLiteral("models/path")).toString();
  if (options_.modelPath) path = *options_.modelPath;
  loadModel(path,
            settings_->value(QStringLiteral("models/cache"), QStringLiteral("radix")).toString(),
            settings_->value(QStringLiteral("models/pool"), 0).toLongLong());
}

void MainWindow::buildLayout() {
  splitter_ = new QSplitter(Qt::Horizontal, this);
  splitter_->setChildrenCollapsible(false);
  splitter_->setHandleWidth(1);

  sidebar_ = new rc::ui::ConversationSidebar(splitter_);
  sidebar_->setModel(controller_->conversationList());
  sidebar_->setMinimumWidth(200);

  auto* center = new QWidget(splitter_);
  center->setObjectName(QStringLiteral("centerPane"));
  auto* v = new QVBoxLayout(center);
  v->setContentsMargins(0, 0, 0, 0);
  v->setSpacing(0);
  auto* header = new QWidget(center);
  header->setObjectName(QStringLiteral("chatHeader"));
  auto* h = new QHBoxLayout(header);
  h->setContentsMargins(18, 10, 12, 10);
  auto* titles = new QVBoxLayout();
  titles->setSpacing(2);
  titleLabel_ = new ElidedLabel(header);
  titleLabel_->setObjectName(QStringLiteral("chatTitle"));
  systemSummary_ = new ElidedLabel(header);
  systemSummary_->setObjectName(QStringLiteral("systemSummary"));
  titles->addWidget(titleLabel_);
  titles->addWidget(systemSummary_);
  h->addLayout(titles, 1);
  systemButton_ = new QPushButton(tr("System prompt…"), header);
  auto* samplingButton = new QPushButton(tr("Settings…"), header);
  samplingButton->setToolTip(tr("Sampling and context length of this conversation (Ctrl+,)"));
  h->addWidget(systemButton_);
  h->addWidget(samplingButton);
  v->addWidget(header);
  chatView_ = new rc::ui::ChatView(center);
  chatView_->setModel(controller_->chatModel());
  v->addWidget(chatView_, 1);
  composer_ = new rc::ui::Composer(center);
  buildDocumentRow(center, v);  // main-window-documents.cpp: chips, paperclip, composer

  panel_ = new rc::ui::CachePanel(splitter_);
  panel_->setMinimumWidth(260);
  panel_->setRemoteConnector(rc::gui::make_remote_connector());

  splitter_->addWidget(sidebar_);
  splitter_->addWidget(center);
  splitter_->addWidget(panel_);
  splitter_->setStretchFactor(0, 0);
  splitter_->setStretchFactor(1, 1);
  splitter_->setStretchFactor(2, 0);
  splitter_->setSizes({250, 650, 380});
  setCentralWidget(splitter_);
  // Only a drag by the user moves the handle with this signal (setSizes
  // does not): from then on the sizes are theirs.
  connect(splitter_, &QSplitter::splitterMoved, this, [this] { splitterByUser_ = true; });

  connect(systemButton_, &QPushButton::clicked, this, &MainWindow::editSystemPrompt);
  connect(samplingButton, &QPushButton::clicked, this, &MainWindow::editSampling);

  auto* bar = addToolBar(tr("Model"));
  bar->setObjectName(QStringLiteral("modelToolBar"));
  bar->setMovable(false);
  bar->addWidget(new QLabel(tr("  Model: "), bar));
  picker_ = new ModelPicker(bar);
  bar->addWidget(picker_);
  serverButton_ = new QPushButton(tr("Connect to a server…"), bar);
  serverButton_->setObjectName(QStringLiteral("serverButton"));
  serverButton_->setToolTip(
      tr("Chat with a vLLM, SGLang or RadixChat server instead of the local model"));
  bar->addWidget(serverButton_);
  connect(serverButton_, &QPushButton::clicked, this, [this] {
    if (controller_->remote())
      useLocalModel();
    else
      openConnectServer();
  });
  backendLabel_ = new QLabel(bar);
  backendLabel_->setObjectName(QStringLiteral("backendLabel"));
  bar->addWidget(backendLabel_);
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* newChat =
      file->addAction(tr("&New chat"), this, [this] { controller_->newConversation(); });
  newChat->setShortcut(QKeySequence::New);  // Ctrl+N
  file->addSeparator();
  file->addAction(tr("Export as &Markdown…"), QKeySequence(tr("Ctrl+E")), this, [this] {
    exportConversation(controller_->currentConversation(), QStringLiteral("markdown"));
  });
  file->addAction(tr("Export as &JSON…"), QKeySequence(tr("Ctrl+Shift+E")), this, [this] {
    exportConversation(controller_->currentConversation(), QStringLiteral("json"));
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* conv = menuBar()->addMenu(tr("&Conversation"));
  conv->addAction(tr("&Find…"), QKeySequence::Find, this, [this] { sidebar_->focusSearch(); });
  conv->addAction(tr("&Attach documents…"), QKeySequence(tr("Ctrl+Shift+A")), this,
                  [this] { openAttachDialog(true); });
  conv->addAction(tr("&Rename…"), QKeySequence(Qt::Key_F2), this,
                  [this] { renameConversation(controller_->currentConversation()); });
  conv->addAction(tr("&Delete"), QKeySequence(tr("Ctrl+Shift+Backspace")), this,
                  [this] { deleteConversation(controller_->currentConversation()); });
  conv->addSeparator();
  conv->addAction(tr("&System prompt…"), QKeySequence(tr("Ctrl+Shift+P")), this,
                  &MainWindow::editSystemPrompt);
  conv->addAction(tr("Sampling &settings…"), QKeySequence(tr("Ctrl+,")), this,
                  &MainWindow::editSampling);

  QMenu* chat = menuBar()->addMenu(tr("C&hat"));
  // Esc stops from anywhere in the window (the composer does not use Esc).
  QAction* stop = chat->addAction(tr("S&top reply"), this, [this] { controller_->stop(); });
  stop->setShortcut(QKeySequence(Qt::Key_Escape));
  stop->setShortcutContext(Qt::WindowShortcut);
  chat->addAction(tr("&Regenerate last reply"), QKeySequence(tr("Ctrl+R")), this,
                  &MainWindow::regenerateLast);
  chat->addAction(tr("&Copy last reply"), QKeySequence(tr("Ctrl+Shift+C")), this,
                  &MainWindow::copyLastReply);
  chat->addAction(tr("&Focus message box"), QKeySequence(tr("Ctrl+L")), this,
                  [this] { composer_->focusInput(); });

  QMenu* model = menuBar()->addMenu(tr("&Model"));
  model->addAction(tr("&Open GGUF file…"), QKeySequence::Open, this,
                   [this] { picker_->openFile(); });
  model->addAction(tr("&Get a model…"), QKeySequence(tr("Ctrl+Shift+O")), this,
                   [this] { openGetModel(); });
  model->addAction(tr("Use the &bundled model"), this, [this] {
    loadModel(QString(), engine_->modelRequest().cachePolicy, engine_->modelRequest().poolTokens);
  });
  model->addAction(tr("&Cancel loading"), this, [this] { engine_->cancelLoad(); });
  // Saved with the other model settings; the local model reloads with it.
  draftedAction_ = model->addAction(tr("&Drafted decoding"));
  draftedAction_->setCheckable(true);
  draftedAction_->setToolTip(
      tr("Propose reply tokens from the cached tree and verify them in one step; the reply "
         "is the same, and a footer says how many were drafted and accepted"));
  draftedAction_->setChecked(settings_->value(QStringLiteral("models/drafted"), true).toBool());
  connect(draftedAction_, &QAction::toggled, this, [this](bool on) {
    settings_->setValue(QStringLiteral("models/drafted"), on);
    if (!engine_->engine() || controller_->remote()) return;
    const rc::ui::ModelRequest& r = engine_->modelRequest();
    loadModel(r.path, r.cachePolicy, r.poolTokens);
  });
  buildTierMenu(model);
  model->addSeparator();
  model->addAction(tr("Connect to a &server…"), this, &MainWindow::openConnectServer);
  model->addAction(tr("Use the &local model"), this, &MainWindow::useLocalModel);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Documents…"), QKeySequence(tr("Ctrl+Shift+D")), this,
                  &MainWindow::openDocuments);
  panelAction_ = view->addAction(tr("&Cache panel"));
  panelAction_->setCheckable(true);
  panelAction_->setShortcut(QKeySequence(Qt::Key_F9));
  connect(panelAction_, &QAction::toggled, this, [this](bool on) { panel_->setVisible(on); });
  // Saved only when the user shows or hides it (menu, F9): the app showing
  // it for a located message, or quitting, never decides the next launch.
  connect(panelAction_, &QAction::triggered, this,
          [this](bool on) { settings_->setValue(QStringLiteral("window/panel"), on); });
}

void MainWindow::buildStatusBar() {
  metricsLabel_ = new QLabel(statusBar());
  metricsLabel_->setObjectName(QStringLiteral("statusMetrics"));
  metricsLabel_->setToolTip(
      tr("The last reply: decode speed, time to first token, and how many "
         "prompt tokens the radix cache served"));
  progress_ = new QProgressBar(statusBar());
  progress_->setRange(0, 100);
  progress_->setMaximumWidth(220);
  progress_->setFormat(tr("Loading %p%"));
  progress_->hide();
  cancelLoad_ = new QPushButton(tr("Cancel"), statusBar());
  cancelLoad_->hide();
  statusBar()->addPermanentWidget(metricsLabel_);
  buildTierStatus();
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancelLoad_);
  connect(cancelLoad_, &QPushButton::clicked, this, [this] { engine_->cancelLoad(); });
}

QString MainWindow::metricsText() const { return metricsLabel_->text(); }

GetModelDialog* MainWindow::openGetModel() {
  if (!getModel_) {
    const CatalogResult cat = loadCatalog(defaultCatalogPath());
    if (!cat.catalog) {
      showError(tr("The model catalog cannot be read"), cat.error);
      return nullptr;
    }
    const QString dir =
        !options_.modelsDir.isEmpty()
            ? options_.modelsDir
            : QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
                  QStringLiteral("/radixchat/models");
    getModel_ = new GetModelDialog(*cat.catalog, dir, QString(), this);
    connect(getModel_, &GetModelDialog::modelReady, this, [this](const QString& path) {
      loadModel(path, engine_->modelRequest().cachePolicy, engine_->modelRequest().poolTokens);
    });
  }
  getModel_->show();
  getModel_->raise();
  getModel_->activateWindow();
  return getModel_;
}

void MainWindow::updateHeader() {
  const QString title =
      controller_->currentConversation() == 0 ? tr("New chat") : controller_->currentTitle();
  titleLabel_->setFullText(title);
  const QString prompt = controller_->systemPrompt().simplified();
  QString presetName;
  for (const PresetRow& p : controller_->presets()) {
    if (controller_->systemPresetId() && p.id == *controller_->systemPresetId())
      presetName = p.name;
  }
  QString summary =
      prompt.isEmpty() ? tr("No system prompt")
      : presetName.isEmpty()
          ? tr("System: %1")
                .arg(prompt.size() > 90 ? prompt.left(89) + QStringLiteral("…") : prompt)
          : tr("System prompt: preset “%1”").arg(presetName);
  systemSummary_->setFullText(summary, controller_->systemPrompt());
  setWindowTitle(title + QStringLiteral(" — RadixChat"));
}

void MainWindow::updateComposerState() {
  const bool loading = !controller_->remote() && engine_->isLoading();
  const bool ready = controller_->hasModel();
  composer_->setReady(ready, loading
                                 ? tr("Loading the model…")
                                 : tr("No model loaded — open one from the Model menu (Ctrl+O)"));
  composer_->setGenerating(controller_->isGenerating());
  chatView_->setBusy(controller_->isGenerating());
  if (welcome_) {
    chatView_->setPlaceholderText(welcomeText(), Qt::MarkdownText);
    return;
  }
  chatView_->setPlaceholderText(
      ready     ? tr("Ask anything. Replies stream here; earlier turns come from the "
                         "radix cache, so follow-ups start fast.")
      : loading ? tr("Loading the model…")
                : tr("No model is loaded."));
}

void MainWindow::saveSettings() {
  settings_->setValue(QStringLiteral("window/geometry"), saveGeometry());
  if (splitterByUser_)
    settings_->setValue(QStringLiteral("window/splitter"), splitter_->saveState());
  if (panel_->splitShare() > 0)
    settings_->setValue(QStringLiteral("window/panelSplit"), panel_->splitShare());
  settings_->setValue(QStringLiteral("models/recent"), picker_->recent());
  settings_->sync();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveSettings();
  QMainWindow::closeEvent(event);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (attachDroppedFiles(watched, event)) return true;
  // The default split follows the splitter's own size, once the splitter
  // has shared it out: the window's resize comes before the layout gives
  // the splitter its width (a first launch kept 380 px on a wide screen).
  if (watched == splitter_ && event->type() == QEvent::Resize)
    QTimer::singleShot(0, this, &MainWindow::applyDefaultSplit);
  if (event->type() == QEvent::Hide) {
    auto* dialog = qobject_cast<QDialog*>(watched);
    if (dialog && dialog->parentWidget() && dialog->parentWidget()->window() == this)
      QTimer::singleShot(0, this, &MainWindow::returnFocus);  // once it is gone
  }
  return QMainWindow::eventFilter(watched, event);
}

void MainWindow::returnFocus() {
  if (!isVisible() || QApplication::activeModalWidget() || QApplication::activePopupWidget())
    return;
  // Even where Qt still counts this window active, the window system may
  // have sent the keyboard to the root window when the dialog went away.
  raise();
  activateWindow();
  QWidget* focus = focusWidget();
  if (!focus || !focus->isVisible()) composer_->focusInput();
}

}  // namespace rc::gui
