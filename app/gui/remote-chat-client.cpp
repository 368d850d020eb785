// RemoteChatClient (remote-chat-client.h) over QNetworkAccessManager.
#include "remote-chat-client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

namespace rc::gui {
namespace {

constexpr int kProbeTimeoutMs = 10000;
// No byte for this long ends a reply: a slow prefill on a loaded server
// still sends its first chunk well within it.
constexpr int kStreamTimeoutMs = 300000;

QString serverMessage(const QByteArray& body) {
  const QJsonDocument doc = QJsonDocument::fromJson(body);
  if (doc.isObject()) {
    const QJsonValue e = doc.object().value(QLatin1String("error"));
    if (e.isObject()) return e.toObject().value(QLatin1String("message")).toString();
    if (e.isString()) return e.toString();
    if (doc.object().value(QLatin1String("message")).isString())
      return doc.object().value(QLatin1String("message")).toString();
  }
  return QString::fromUtf8(body.left(200)).simplified();
}

}  // namespace

RemoteChatClient::RemoteChatClient(QObject* parent) : QObject(parent) {}

RemoteChatClient::~RemoteChatClient() {
  // No signal may reach a half-destroyed client: cut them, then abort.
  if (probe_) {
    QObject::disconnect(probe_, nullptr, this, nullptr);
    probe_->abort();
  }
  for (auto& [tag, r] : running_) {
    if (!r->reply) continue;
    QObject::disconnect(r->reply, nullptr, this, nullptr);
    r->reply->abort();
  }
}

QUrl RemoteChatClient::apiBase(const QString& url) {
  QString u = url.trimmed();
  while (u.endsWith(QLatin1Char('/'))) u.chop(1);
  if (u.endsWith(QLatin1String("/v1"))) u.chop(3);
  const QUrl parsed(u + QStringLiteral("/v1"), QUrl::StrictMode);
  if (!parsed.isValid() || parsed.host().isEmpty() ||
      (parsed.scheme() != QLatin1String("http") && parsed.scheme() != QLatin1String("https")))
    return {};
  return parsed;
}

QString RemoteChatClient::describe() const {
  return tr("%1 at %2").arg(server_.model, base_.authority());
}

QNetworkRequest RemoteChatClient::request(const QString& path) const {
  QUrl url = base_;
  url.setPath(base_.path() + path);
  QNetworkRequest req(url);
  req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
  if (!server_.apiKey.isEmpty())
    req.setRawHeader("Authorization", "Bearer " + server_.apiKey.toUtf8());
  return req;
}

QString RemoteChatClient::httpError(QNetworkReply* reply, const QByteArray& body) const {
  const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  const QString where = base_.authority();
  const QString said = serverMessage(body);
  if (status == 401 || status == 403)
    return tr("%1 refused the API key (HTTP %2)%3")
        .arg(where)
        .arg(status)
        .arg(said.isEmpty() ? QString() : QStringLiteral(": ") + said);
  if (status >= 400) return tr("%1 answered HTTP %2: %3").arg(where).arg(status).arg(said);
  switch (reply->error()) {
    case QNetworkReply::ConnectionRefusedError:
      return tr("cannot reach %1: connection refused").arg(where);
    case QNetworkReply::HostNotFoundError:
      return tr("cannot reach %1: host not found").arg(where);
    case QNetworkReply::OperationCanceledError:
    case QNetworkReply::TimeoutError:
      return tr("%1 did not answer in time").arg(where);
    case QNetworkReply::RemoteHostClosedError:
      return tr("%1 closed the connection").arg(where);
    default:
      return tr("%1: %2").arg(where, reply->errorString());
  }
}

void RemoteChatClient::connectTo(const RemoteServer& server) {
  disconnectFromServer();
  server_ = server;
  base_ = apiBase(server.url);
  if (!base_.isValid()) {
    const QString why = tr("'%1' is not an http:// or https:// URL").arg(server.url);
    QTimer::singleShot(0, this, [this, why] { emit connectFailed(why); });
    return;
  }
  QNetworkRequest req = request(QStringLiteral("/models"));
  req.setTransferTimeout(kProbeTimeoutMs);
  probe_ = net_.get(req);
  QNetworkReply* reply = probe_;
  connect(reply, &QNetworkReply::finished, this, [this, reply] {
    reply->deleteLater();
    const QByteArray body = reply->readAll();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (reply->error() != QNetworkReply::NoError || status >= 400) {
      emit connectFailed(httpError(reply, body));
      return;
    }
    QStringList ids;
    for (const QJsonValue& m :
         QJsonDocument::fromJson(body).object().value(QLatin1String("data")).toArray())
      ids << m.toObject().value(QLatin1String("id")).toString();
    ids.removeAll(QString());
    if (server_.model.isEmpty()) {
      if (ids.isEmpty()) {
        emit connectFailed(tr("%1 lists no model at /v1/models: give the model's name")
                               .arg(base_.authority()));
        return;
      }
      server_.model = ids.front();
    } else if (!ids.contains(server_.model)) {
      emit connectFailed(tr("%1 does not serve '%2' (it lists: %3)")
                             .arg(base_.authority(), server_.model,
                                  ids.isEmpty() ? tr("nothing") : ids.join(QStringLiteral(", "))));
      return;
    }
    connected_ = true;
    emit connected(server_.model);
  });
}

void RemoteChatClient::disconnectFromServer() {
  connected_ = false;
  if (probe_) {
    QObject::disconnect(probe_, nullptr, this, nullptr);
    probe_->abort();
    probe_->deleteLater();
  }
  std::vector<quint64> tags;
  for (const auto& [tag, r] : running_) tags.push_back(tag);
  for (quint64 tag : tags) stop(tag);
}

void RemoteChatClient::finishSoon(quint64 tag, const QString& error) {
  QTimer::singleShot(0, this, [this, tag, error] {
    rc::ui::GenerationOutcome out;
    out.reason = QStringLiteral("error");
    out.error = error;
    out.metrics.finishReason = out.reason;
    emit generationFinished(tag, out);
  });
}

quint64 RemoteChatClient::generate(const rc::ui::GenerationJob& job) {
  const quint64 tag = nextTag_++;
  if (!connected_) {
    finishSoon(tag, tr("not connected to a server"));
    return tag;
  }
  QJsonArray messages;
  for (const rc::ChatMessage& m : job.messages)
    messages.append(QJsonObject{{QStringLiteral("role"), QString::fromStdString(m.role)},
                                {QStringLiteral("content"), QString::fromStdString(m.content)}});
  const rc::SamplingParams& s = job.sampling;
  QJsonObject body{{QStringLiteral("model"), server_.model},
                   {QStringLiteral("messages"), messages},
                   {QStringLiteral("stream"), true},
                   {QStringLiteral("stream_options"),
                    QJsonObject{{QStringLiteral("include_usage"), true}}},
                   {QStringLiteral("temperature"), double(std::max(s.temperature, 0.0f))},
                   // Servers validate the seed as a signed int: keep it in range.
                   {QStringLiteral("seed"), double(s.seed % 2147483647u)}};
  if (job.maxTokens > 0) body[QStringLiteral("max_tokens")] = job.maxTokens;
  if (s.top_p < 1.0f) body[QStringLiteral("top_p")] = double(s.top_p);
  // Extensions vLLM, SGLang and RadixChat all accept.
  if (s.top_k > 0) body[QStringLiteral("top_k")] = s.top_k;
  if (s.min_p > 0.0f) body[QStringLiteral("min_p")] = double(s.min_p);
  if (s.repetition_penalty != 1.0f)
    body[QStringLiteral("repetition_penalty")] = double(s.repetition_penalty);

  QNetworkRequest req = request(QStringLiteral("/chat/completions"));
  req.setRawHeader("Accept", "text/event-stream");
  req.setTransferTimeout(kStreamTimeoutMs);
  auto run = std::make_unique<Running>();
  run->clock.start();
  QNetworkReply* reply = net_.post(req, QJsonDocument(body).toJson(QJsonDocument::Compact));
  run->reply = reply;
  running_[tag] = std::move(run);
  connect(reply, &QNetworkReply::readyRead, this, [this, tag] { onReadyRead(tag); });
  connect(reply, &QNetworkReply::finished, this, [this, tag] { onFinished(tag); });
  return tag;
}

void RemoteChatClient::stop(quint64 tag) {
  auto it = running_.find(tag);
  if (it == running_.end() || !it->second->reply) return;
  it->second->stopped = true;
  it->second->reply->abort();  // finished() follows: reason "cancelled"
}

void RemoteChatClient::onReadyRead(quint64 tag) {
  auto it = running_.find(tag);
  if (it == running_.end() || !it->second->reply) return;
  Running& r = *it->second;
  QNetworkReply* reply = r.reply;
  // An HTTP error's body is its JSON reason: read it when the reply ends.
  if (reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() >= 400) return;
  if (!r.error.isEmpty()) return;
  r.stream.feed(reply->readAll());
  const QString text = r.stream.takeText();
  if (!text.isEmpty()) {
    if (r.firstTextMs < 0) r.firstTextMs = r.clock.elapsed();
    emit textArrived(tag, text);
  }
  if (r.stream.failed()) {
    r.error = tr("malformed stream from %1: %2").arg(base_.authority(), r.stream.error());
    reply->abort();  // finished() reports it once
  }
}

void RemoteChatClient::onFinished(quint64 tag) {
  auto it = running_.find(tag);
  if (it == running_.end()) return;
  std::unique_ptr<Running> r = std::move(it->second);
  running_.erase(it);
  QNetworkReply* reply = r->reply;
  if (!reply) return;
  reply->deleteLater();
  rc::ui::GenerationOutcome out;
  const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (r->stopped) {
    out.reason = QStringLiteral("cancelled");
  } else if (!r->error.isEmpty()) {
    out.error = r->error;
  } else if (reply->error() != QNetworkReply::NoError || status >= 400) {
    out.error = httpError(reply, reply->readAll());
  } else {
    r->stream.feed(reply->readAll());
    const QString text = r->stream.takeText();
    if (!text.isEmpty()) {
      if (r->firstTextMs < 0) r->firstTextMs = r->clock.elapsed();
      emit textArrived(tag, text);
    }
    if (r->stream.failed())
      out.error = tr("malformed stream from %1: %2").arg(base_.authority(), r->stream.error());
    else if (!r->stream.done() && r->stream.finishReason().isEmpty())
      out.error = tr("the stream from %1 ended before the reply was complete (no [DONE])")
                      .arg(base_.authority());
  }
  if (!out.error.isEmpty()) out.reason = QStringLiteral("error");
  if (out.reason.isEmpty())
    out.reason = r->stream.finishReason() == QLatin1String("length") ? QStringLiteral("length")
                                                                      : QStringLiteral("stop");
  rc::ui::ReplyMetrics& m = out.metrics;
  m.finishReason = out.reason;
  if (r->stream.hasUsage()) {
    m.promptTokens = r->stream.promptTokens();
    m.cachedTokens = r->stream.cachedTokens();
    m.completionTokens = r->stream.completionTokens();
  }
  if (r->firstTextMs >= 0) {
    m.ttftMs = double(r->firstTextMs);
    const double decodeS = double(r->clock.elapsed() - r->firstTextMs) / 1000.0;
    if (m.completionTokens > 1 && decodeS > 0)
      m.tokensPerSecond = double(m.completionTokens - 1) / decodeS;
  }
  emit generationFinished(tag, out);
}

}  // namespace rc::gui
