// ConnectServerDialog (connect-server-dialog.h).
#include "connect-server-dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace rc::gui {

ConnectServerDialog::ConnectServerDialog(const ServerChoice& initial, QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(tr("Connect to a server"));
  auto* v = new QVBoxLayout(this);
  auto* intro = new QLabel(
      tr("Chat with an OpenAI-compatible server (vLLM, SGLang, Dynamo, another RadixChat). "
         "Conversations are still saved on this computer."),
      this);
  intro->setWordWrap(true);
  v->addWidget(intro);
  auto* form = new QFormLayout();
  url_ = new QLineEdit(initial.server.url, this);
  url_->setObjectName(QStringLiteral("serverUrl"));
  url_->setPlaceholderText(QStringLiteral("http://127.0.0.1:8000"));
  key_ = new QLineEdit(initial.server.apiKey, this);
  key_->setObjectName(QStringLiteral("serverKey"));
  key_->setEchoMode(QLineEdit::Password);
  key_->setPlaceholderText(tr("none"));
  model_ = new QLineEdit(initial.server.model, this);
  model_->setObjectName(QStringLiteral("serverModel"));
  model_->setPlaceholderText(tr("the first one the server lists"));
  form->addRow(tr("Server URL:"), url_);
  form->addRow(tr("API key:"), key_);
  form->addRow(tr("Model name:"), model_);
  v->addLayout(form);

  watch_ = new QCheckBox(tr("Show this server's cache in the panel"), this);
  watch_->setObjectName(QStringLiteral("watchCache"));
  watch_->setChecked(initial.watchCache);
  v->addWidget(watch_);
  auto* cache = new QFormLayout();
  kvEvents_ = new QLineEdit(initial.kvEvents, this);
  kvEvents_->setObjectName(QStringLiteral("kvEvents"));
  kvEvents_->setPlaceholderText(tr("tcp://HOST:5557 (one per rank, comma-separated)"));
  kvEvents_->setToolTip(
      tr("vLLM / SGLang: the endpoint given in --kv-events-config. Leave empty for a RadixChat "
         "server: its /v1/cache/events is used with the API key above."));
  kvReplay_ = new QLineEdit(initial.kvReplay, this);
  kvReplay_->setObjectName(QStringLiteral("kvReplay"));
  kvReplay_->setPlaceholderText(tr("optional, same order"));
  vocab_ = new QLineEdit(initial.vocab, this);
  vocab_->setPlaceholderText(tr("optional GGUF: token text instead of ids"));
  cache->addRow(tr("KV events:"), kvEvents_);
  cache->addRow(tr("Replay:"), kvReplay_);
  cache->addRow(tr("Vocabulary:"), vocab_);
  v->addLayout(cache);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  v->addWidget(note_);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Connect"));
  v->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(url_, &QLineEdit::textChanged, this, &ConnectServerDialog::updateState);
  connect(watch_, &QCheckBox::toggled, this, &ConnectServerDialog::updateState);
  connect(kvEvents_, &QLineEdit::textChanged, this, &ConnectServerDialog::updateState);
  updateState();
}

void ConnectServerDialog::updateState() {
  const bool urlOk = RemoteChatClient::apiBase(url_->text()).isValid();
  findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->setEnabled(urlOk);
  for (QLineEdit* e : {kvEvents_, kvReplay_, vocab_}) e->setEnabled(watch_->isChecked());
  if (!urlOk && !url_->text().trimmed().isEmpty())
    note_->setText(tr("The URL must start with http:// or https://."));
  else if (watch_->isChecked() && kvEvents_->text().trimmed().isEmpty())
    note_->setText(tr("The panel will follow a RadixChat server's /v1/cache/events."));
  else if (watch_->isChecked())
    note_->setText(
        tr("ZeroMQ has no authentication: use KV events on loopback or a private network only."));
  else
    note_->clear();
}

ServerChoice ConnectServerDialog::choice() const {
  ServerChoice c;
  c.server.url = url_->text().trimmed();
  c.server.apiKey = key_->text();
  c.server.model = model_->text().trimmed();
  c.watchCache = watch_->isChecked();
  c.kvEvents = kvEvents_->text().trimmed();
  c.kvReplay = kvReplay_->text().trimmed();
  c.vocab = vocab_->text().trimmed();
  return c;
}

}  // namespace rc::gui
