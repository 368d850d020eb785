// MainWindow: the chat on a remote server, "Connect to a server…".
// The controller sends replies to the RemoteChatClient; the panel follows
// the server's cache when the user asked for it.
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>

#include "chat/composer.h"
#include "main-window.h"
#include "panel/cache-panel.h"

namespace rc::gui {

void MainWindow::openConnectServer() {
  ServerChoice initial = serverChoice_;
  if (initial.server.url.isEmpty()) {
    initial.server.url = settings_->value(QStringLiteral("server/url")).toString();
    initial.server.model = settings_->value(QStringLiteral("server/model")).toString();
    initial.watchCache = settings_->value(QStringLiteral("server/watch"), true).toBool();
    initial.kvEvents = settings_->value(QStringLiteral("server/kv_events")).toString();
    initial.kvReplay = settings_->value(QStringLiteral("server/kv_replay")).toString();
    initial.vocab = settings_->value(QStringLiteral("server/vocab")).toString();
  }
  ConnectServerDialog dialog(initial, this);
  if (dialog.exec() != QDialog::Accepted) return;
  const ServerChoice c = dialog.choice();
  // The API key is not written to the settings file (plain text on disk).
  settings_->setValue(QStringLiteral("server/url"), c.server.url);
  settings_->setValue(QStringLiteral("server/model"), c.server.model);
  settings_->setValue(QStringLiteral("server/watch"), c.watchCache);
  settings_->setValue(QStringLiteral("server/kv_events"), c.kvEvents);
  settings_->setValue(QStringLiteral("server/kv_replay"), c.kvReplay);
  settings_->setValue(QStringLiteral("server/vocab"), c.vocab);
  connectToServer(c);
}

void MainWindow::connectToServer(const ServerChoice& choice) {
  if (!remote_) {
    remote_ = new RemoteChatClient(this);
    connect(remote_, &RemoteChatClient::connected, this, &MainWindow::onServerConnected);
    connect(remote_, &RemoteChatClient::connectFailed, this, [this](const QString& why) {
      showError(tr("Cannot connect to the server"), why);
      emit serverConnectFailed(why);
    });
  }
  if (controller_->remote()) useLocalModel();
  serverChoice_ = choice;
  statusBar()->showMessage(tr("Connecting to %1…").arg(choice.server.url));
  remote_->connectTo(choice.server);
}

void MainWindow::onServerConnected() {
  controller_->setRemote(remote_);
  const ServerChoice& c = serverChoice_;
  QString panelNote;
  if (c.watchCache) {
    rc::ui::panel::AttachRequest r;
    if (c.kvEvents.isEmpty()) {
      r.kind = rc::ui::panel::AttachRequest::Kind::radixchat;
      r.url = c.server.url.toStdString();
      r.api_key = c.server.apiKey.toStdString();
    } else {
      r.endpoint = c.kvEvents.toStdString();
      r.replay = c.kvReplay.toStdString();
    }
    r.vocab = c.vocab.toStdString();
    if (panelOnServer_) panel_->detachRemote();
    const QString err = panel_->attachRemote(r);
    panelOnServer_ = err.isEmpty();
    if (!err.isEmpty()) panelNote = tr(" The panel could not attach to its cache: %1").arg(err);
  }
  backendLabel_->setText(tr("Server: %1").arg(remote_->describe()));
  backendLabel_->setToolTip(tr("Replies come from %1; conversations are saved here.")
                                .arg(RemoteChatClient::apiBase(c.server.url).toString()));
  serverButton_->setText(tr("Disconnect"));
  serverButton_->setToolTip(tr("Back to the local model"));
  statusBar()->showMessage(tr("Connected to %1.").arg(remote_->describe()) + panelNote, 15000);
  updateComposerState();
  emit serverConnected(remote_->server().model);
}

void MainWindow::useLocalModel() {
  if (!remote_) return;
  const bool was = controller_->remote() != nullptr;
  controller_->setRemote(nullptr);
  remote_->disconnectFromServer();
  if (panelOnServer_) panel_->detachRemote();
  panelOnServer_ = false;
  serverButton_->setText(tr("Connect to a server…"));
  serverButton_->setToolTip(
      tr("Chat with a vLLM, SGLang or RadixChat server instead of the local model"));
  if (was) {
    backendLabel_->setText(engine_->hasModel() ? tr("Local model: %1").arg(engine_->model().name)
                                               : QString());
    backendLabel_->setToolTip(QString());
    statusBar()->showMessage(tr("Back to the local model."), 6000);
  }
  updateComposerState();
}

}  // namespace rc::gui
