// RemoteChatClient: the chat's model is a remote OpenAI-compatible server
// (vLLM, SGLang, a RadixChat `serve`): "Connect to a server...".
// Each reply is one streaming POST /v1/chat/completions with the whole
// conversation (the server's prefix cache reuses the earlier turns), the
// API key as a Bearer token, the model name, and stream_options.include_usage
// so the cached-token figures come from the usage the server reports.
//
// It offers the same generate/stop and textArrived/generationFinished as
// EngineHost, so ChatController drives either. Every generate() finishes
// exactly once, always from the event loop (never inside generate()).
// Failures (unreachable, refused key, HTTP error, malformed or cut stream)
// finish the reply with reason "error" and one line; the text that arrived
// before stays. Tags start at kFirstTag so they never equal an engine's.
//
// Thread: GUI thread (QNetworkAccessManager's thread).
#pragma once

#include <QElapsedTimer>
#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>
#include <map>
#include <memory>

#include "chat/engine-worker.h"
#include "openai-stream.h"

class QNetworkReply;

namespace rc::gui {

struct RemoteServer {
  QString url;     // http(s)://HOST:PORT; a trailing "/" or "/v1" is accepted
  QString apiKey;  // "" when the server needs none
  QString model;   // "" : the first model the server lists
};

class RemoteChatClient : public QObject {
  Q_OBJECT
 public:
  static constexpr quint64 kFirstTag = quint64(1) << 48;

  explicit RemoteChatClient(QObject* parent = nullptr);
  ~RemoteChatClient() override;  // aborts what runs (no signals after)

  // GET /v1/models with the key: connected(model) once the server answers
  // (the model resolved when none was given), else connectFailed(reason).
  // Until then, and after a failure, isConnected() is false.
  void connectTo(const RemoteServer& server);
  void disconnectFromServer();  // replies running are stopped
  bool isConnected() const { return connected_; }
  const RemoteServer& server() const { return server_; }
  // "MODEL at HOST:PORT" for the window.
  QString describe() const;
  // The base URL with /v1 appended ("http://h:p/v1"), or an invalid QUrl.
  static QUrl apiBase(const QString& url);

  quint64 generate(const rc::ui::GenerationJob& job);
  void stop(quint64 tag);  // finishes with reason "cancelled", text kept

 signals:
  void connected(const QString& model);
  void connectFailed(const QString& message);
  void textArrived(quint64 tag, const QString& text);
  void generationFinished(quint64 tag, const rc::ui::GenerationOutcome& outcome);

 private:
  struct Running {
    QPointer<QNetworkReply> reply;
    OpenAiStream stream;
    QElapsedTimer clock;
    qint64 firstTextMs = -1;
    bool stopped = false;
    QString error;  // set when the stream was found malformed
  };
  QNetworkRequest request(const QString& path) const;
  void onReadyRead(quint64 tag);
  void onFinished(quint64 tag);
  void finishSoon(quint64 tag, const QString& error);
  QString httpError(QNetworkReply* reply, const QByteArray& body) const;

  QNetworkAccessManager net_;
  RemoteServer server_;
  QUrl base_;
  bool connected_ = false;
  QPointer<QNetworkReply> probe_;
  std::map<quint64, std::unique_ptr<Running>> running_;
  quint64 nextTag_ = kFirstTag;
};

}  // namespace rc::gui
