// ConnectServerDialog: "Connect to a server...". The chat's model
// becomes a remote OpenAI-compatible server (URL, API key, model name), and
// optionally the cache panel attaches to that server's cache at the same
// time: a vLLM/SGLang/Dynamo KV-events endpoint (tcp://...), or, with no
// endpoint, a RadixChat server's own /v1/cache/events. Modal, GUI thread;
// it only collects the choice, the window connects.
#pragma once

#include <QDialog>

#include "remote-chat-client.h"

class QCheckBox;
class QLabel;
class QLineEdit;

namespace rc::gui {

struct ServerChoice {
  RemoteServer server;
  bool watchCache = false;  // attach the panel too
  QString kvEvents;         // tcp://HOST:5557[,tcp://HOST:5558...] one per rank; "": RadixChat
  QString kvReplay;         // replay endpoints in the same order, "" for none
  QString vocab;            // a GGUF for the panel's token text, "" for ids
};

class ConnectServerDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ConnectServerDialog(const ServerChoice& initial, QWidget* parent = nullptr);
  ServerChoice choice() const;

 private:
  void updateState();

  QLineEdit* url_ = nullptr;
  QLineEdit* key_ = nullptr;
  QLineEdit* model_ = nullptr;
  QCheckBox* watch_ = nullptr;
  QLineEdit* kvEvents_ = nullptr;
  QLineEdit* kvReplay_ = nullptr;
  QLineEdit* vocab_ = nullptr;
  QLabel* note_ = nullptr;
};

}  // namespace rc::gui
