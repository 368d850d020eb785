// MainWindow: the desktop chat put together: conversations on the
// left, the chat in the middle, the live cache panel (ui/panel) on the
// right; the model picker and backend in the tool bar; reply figures and
// model loading in the status bar.
//
// Threads: GUI thread. It owns the EngineHost (engine worker thread) and the
// ChatController; the StoreThread is the caller's and must outlive it.
// Destruction order matters and is explicit in ~MainWindow: the controller
// first (it saves a streaming reply), then the engine host (the panel gets
// setEngine(nullptr) before any engine is destroyed), then the documents'
// controller (the engine worker's queued document tasks call into it), then
// the widgets.
//
// Settings (QSettings: window layout, model, cache policy, recent files,
// the disk cache's switch and budget)
// live in `settingsFile` when given (tests, --data-dir), else in Qt's
// default place: $XDG_CONFIG_HOME/RadixChat/radixchat.conf.
#pragma once

#include <QMainWindow>
#include <QPointer>
#include <map>
#include <memory>
#include <optional>

#include "chat-controller.h"
#include "connect-server-dialog.h"

class QAction;
class QLabel;
class QMenu;
class QTimer;
class QToolButton;
class QVBoxLayout;
class QProgressBar;
class QPushButton;
class QSettings;
class QSplitter;

namespace rc::ui {
class CachePanel;
class ChatView;
class Composer;
class DocumentChips;
class ConversationSidebar;
class EngineHost;
struct ModelRequest;
}  // namespace rc::ui

namespace rc::gui {

class DocumentController;
class DocumentsDialog;
class ElidedLabel;
class GetModelDialog;
class ModelPicker;

struct WindowOptions {
  QString settingsFile;              // empty: Qt's default location
  std::optional<QString> modelPath;  // given on the command line: overrides the saved choice
  QString modelsDir;  // downloads ("Get a model…"); empty: $XDG_DATA_HOME/radixchat/models
  // The disk cache of KV blocks (EngineConfig::kv_disk): "default"
  // ($XDG_CACHE_HOME/radixchat/kv; with a settingsFile, a "kv" folder beside
  // it), a folder, or empty (none). On unless Model > Disk cache is unticked.
  QString kvDisk = QStringLiteral("default");
  std::optional<qint64> kvDiskBytes;  // overrides the saved budget (cache/diskBytes)
  QString kvRedis;                    // redis://[:password@]host:port[/db]; empty: none
  // The document library (docs/architecture.md section 21): empty is
  // library.db beside the settingsFile when one is given, else the CLI's
  // default beside the history (rc::library::default_library_path).
  QString libraryPath;
  // First run: the empty chat's page is the introduction (welcome.h) until
  // there is a conversation; what is typed under it starts a new one.
  bool welcome = false;
};

// The cache panel's width before the user drags the splitter, in a window
// whose splitter is `total` px wide with a `sidebar` px conversation list:
// 47% of the rest on a wide window (docs/architecture.md section 16), the
// chat keeping at least 600 px; 380 px otherwise.
int panelDefaultWidth(int total, int sidebar);

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  MainWindow(rc::store::StoreThread* store, const WindowOptions& options,
             QWidget* parent = nullptr);
  ~MainWindow() override;

  // Reads conversations and starts loading the model; call once, shown or not.
  void start();

  ChatController* controller() const { return controller_.get(); }
  rc::ui::EngineHost* engineHost() const { return engine_.get(); }
  rc::ui::ChatView* chatView() const { return chatView_; }
  rc::ui::Composer* composer() const { return composer_; }
  rc::ui::CachePanel* cachePanel() const { return panel_; }
  QString metricsText() const;
  // Model > Get a model…: the download dialog (made once, kept while a
  // download runs in the background). Null when the catalog is unreadable.
  GetModelDialog* openGetModel();

  // Model > Connect to a server…: the chat answers from a remote
  // OpenAI-compatible server, the panel optionally watches its cache.
  // connectToServer() is what the dialog's Connect does (tests call it):
  // serverConnected or serverConnectFailed follows. useLocalModel() goes
  // back to this computer's engine (and its cache in the panel).
  void openConnectServer();
  void connectToServer(const ServerChoice& choice);
  void useLocalModel();
  RemoteChatClient* remoteClient() const { return remote_; }

  // Documents (main-window-documents.cpp): the paperclip's file dialog
  // (non-modal, in the home folder; its files are attached to the
  // conversation on screen, or only added to the library when `attach` is
  // false), the Documents pane (View > Documents…), and the chips.
  void openAttachDialog(bool attach);
  DocumentsDialog* openDocuments();
  DocumentController* documents() const { return documents_.get(); }
  rc::ui::DocumentChips* documentChips() const { return chips_; }
  QToolButton* attachButton() const { return attachButton_; }

 signals:
  // A model is loaded and the conversation list read: ready for a message.
  void readyForInput();
  // The first model load at start failed (the app keeps running).
  void startupLoadFailed(const QString& message);
  void serverConnected(const QString& model);
  void serverConnectFailed(const QString& message);

 protected:
  void closeEvent(QCloseEvent* event) override;
  // Files dropped on the chat are attached to it; and when one of this
  // window's dialogs closes, the window is made active again (returnFocus),
  // so its shortcuts work at once even where no window manager hands the
  // focus back (Xvfb, some desktops).
  bool eventFilter(QObject* watched, QEvent* event) override;
  // eventFilter's half for the chat: files dragged onto it are accepted and
  // attached when dropped (main-window-documents.cpp). True when it took the event.
  bool attachDroppedFiles(QObject* watched, QEvent* event);

 private:
  // The size before any saved geometry: 85% of the screen's available room,
  // at least 1280x800 where that fits, so a large monitor gives the chat and
  // the panel both their share (fitToScreen bounds it to a small screen).
  QSize firstLaunchSize() const;
  // Shrinks and moves the window into its screen's available geometry.
  void fitToScreen();
  // Until the user drags the splitter, a wide window gives the cache panel
  // close to half of what the conversation list leaves (panelDefaultWidth).
  void applyDefaultSplit();
  void buildLayout();
  void makeDocuments(rc::store::StoreThread* store);
  void buildDocumentRow(QWidget* center, QVBoxLayout* v);
  void buildMenus();
  void buildStatusBar();
  void connectController();
  void connectEngine();
  void connectPanel();
  void loadModel(const QString& path, const QString& cachePolicy, qint64 poolTokens);
  // main-window-tiers.cpp: Model > Disk cache, its size and Clear; the
  // status bar's tier words; the tier fields of a load request.
  void buildTierMenu(QMenu* model);
  void buildTierStatus();
  void updateTierStatus();
  void setTierRequest(rc::ui::ModelRequest& r) const;
  void reloadForTiers();
  void updateHeader();
  void updateComposerState();
  void editSystemPrompt();
  void editSampling();
  void renameConversation(qint64 id);
  void deleteConversation(qint64 id);
  void exportConversation(qint64 id, const QString& format);
  void showError(const QString& title, const QString& message);
  void regenerateLast();
  void copyLastReply();
  void saveSettings();
  void maybeReady();
  // Activates this window and, when nothing in it has the focus, the
  // composer. Not while another modal dialog or a popup is open.
  void returnFocus();
  void onServerConnected();

  std::unique_ptr<QSettings> settings_;
  std::unique_ptr<rc::ui::EngineHost> engine_;
  std::unique_ptr<ChatController> controller_;
  std::unique_ptr<DocumentController> documents_;
  DocumentsDialog* documentsDialog_ = nullptr;  // child; made on first use
  rc::ui::DocumentChips* chips_ = nullptr;
  QToolButton* attachButton_ = nullptr;
  WindowOptions options_;

  QSplitter* splitter_ = nullptr;
  rc::ui::ConversationSidebar* sidebar_ = nullptr;
  rc::ui::ChatView* chatView_ = nullptr;
  rc::ui::Composer* composer_ = nullptr;
  rc::ui::CachePanel* panel_ = nullptr;
  ElidedLabel* titleLabel_ = nullptr;
  ElidedLabel* systemSummary_ = nullptr;
  QPushButton* systemButton_ = nullptr;
  ModelPicker* picker_ = nullptr;
  GetModelDialog* getModel_ = nullptr;
  QLabel* backendLabel_ = nullptr;
  QLabel* metricsLabel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancelLoad_ = nullptr;
  QAction* panelAction_ = nullptr;
  QAction* draftedAction_ = nullptr;    // Model > Drafted decoding, saved as models/drafted
  QAction* diskCacheAction_ = nullptr;  // Model > Disk cache, saved as cache/disk
  QLabel* tierLabel_ = nullptr;         // "disk 1.2 GB · Redis down"
  QTimer* tierTimer_ = nullptr;
  RemoteChatClient* remote_ = nullptr;  // child; made on the first connect
  QPushButton* serverButton_ = nullptr;
  ServerChoice serverChoice_;   // the latest connect's
  bool panelOnServer_ = false;  // the panel was attached by connectToServer
  // The user dragged the splitter (now or in a saved launch): their sizes
  // are kept and saved; until then the default split follows the window.
  bool splitterByUser_ = false;
  bool lessonWide_ = false;  // a lesson widened the panel (connectPanel)

  QString loadingPath_;  // the path of the load in progress ("" bundled)
  bool listLoaded_ = false;
  bool readyEmitted_ = false;
  bool firstLoad_ = true;
  bool welcome_ = false;  // the introduction is on the empty chat's page
  // Prefix lookups from the panel: conversation -> branch tip to open.
  std::map<qint64, qint64> prefixLeaves_;
};

}  // namespace rc::gui
