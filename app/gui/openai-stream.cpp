// OpenAiStream (openai-stream.h): SSE lines -> events -> JSON chunks.
#include "openai-stream.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

namespace rc::gui {
namespace {

// An optional string field: absent and null are "", anything else but a
// string is a type error (reported through *bad).
QString optionalString(const QJsonObject& o, const char* key, bool* bad) {
  const QJsonValue v = o.value(QLatin1String(key));
  if (v.isUndefined() || v.isNull()) return {};
  if (!v.isString()) *bad = true;
  return v.toString();
}

// A non-negative token count, or -1 when absent/null; *bad on a wrong type.
int optionalCount(const QJsonObject& o, const char* key, bool* bad) {
  const QJsonValue v = o.value(QLatin1String(key));
  if (v.isUndefined() || v.isNull()) return -1;
  const double d = v.toDouble(-1);
  if (!v.isDouble() || d < 0 || d > 1e9) {
    *bad = true;
    return -1;
  }
  return static_cast<int>(d);
}

}  // namespace

void OpenAiStream::fail(const QString& why) {
  if (error_.isEmpty()) error_ = why;
}

bool OpenAiStream::feed(const QByteArray& bytes) {
  if (failed() || done_) return !failed();
  pending_ += bytes;
  qsizetype at = 0;
  while (!failed() && !done_) {
    // A line ends at \n, \r\n or \r; a \r at the very end may be half of \r\n.
    qsizetype end = at;
    while (end < pending_.size() && pending_[end] != '\n' && pending_[end] != '\r') ++end;
    if (end >= pending_.size() || (pending_[end] == '\r' && end + 1 >= pending_.size())) break;
    const QByteArray line = pending_.mid(at, end - at);
    at = end + ((pending_[end] == '\r' && pending_[end + 1] == '\n') ? 2 : 1);
    if (line.isEmpty()) {  // a blank line ends the event
      if (hasData_) {
        data_.chop(1);  // the '\n' after the last data line
        event(data_);
      }
      data_.clear();
      hasData_ = false;
      continue;
    }
    if (line.startsWith(':')) continue;  // a comment (keep-alive)
    const qsizetype colon = line.indexOf(':');
    const QByteArray field = colon < 0 ? line : line.left(colon);
    QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
    if (value.startsWith(' ')) value.remove(0, 1);
    if (field != "data") continue;  // event:, id:, retry: carry nothing here
    data_ += value + '\n';
    hasData_ = true;
    if (data_.size() > kMaxEventBytes) fail(QStringLiteral("a stream event over 1 MiB"));
  }
  pending_.remove(0, at);
  if (pending_.size() > kMaxEventBytes) fail(QStringLiteral("a stream line over 1 MiB"));
  return !failed();
}

void OpenAiStream::event(const QByteArray& data) {
  if (data.trimmed() == "[DONE]") {
    done_ = true;
    if (inThink_) text_ += QStringLiteral("</think>");
    inThink_ = false;
    return;
  }
  chunk(data);
}

void OpenAiStream::chunk(const QByteArray& json) {
  QJsonParseError perr;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &perr);
  if (perr.error != QJsonParseError::NoError || !doc.isObject()) {
    fail(QStringLiteral("a stream chunk is not a JSON object (%1): %2")
             .arg(perr.error != QJsonParseError::NoError ? perr.errorString()
                                                         : QStringLiteral("not an object"),
                  QString::fromUtf8(json.left(80))));
    return;
  }
  const QJsonObject o = doc.object();
  if (o.contains(QLatin1String("error"))) {
    const QJsonValue e = o.value(QLatin1String("error"));
    const QString msg = e.isObject() ? e.toObject().value(QLatin1String("message")).toString()
                                     : e.toString();
    fail(QStringLiteral("the server reported: %1")
             .arg(msg.isEmpty() ? QString::fromUtf8(json.left(200)) : msg));
    return;
  }
  bool bad = false;
  const QJsonValue choices = o.value(QLatin1String("choices"));
  if (!choices.isUndefined() && !choices.isNull() && !choices.isArray()) bad = true;
  const QJsonArray list = choices.toArray();
  if (!list.isEmpty()) {
    if (!list.at(0).isObject()) bad = true;
    const QJsonObject choice = list.at(0).toObject();
    const QJsonValue delta = choice.value(QLatin1String("delta"));
    if (!delta.isUndefined() && !delta.isNull() && !delta.isObject()) bad = true;
    const QJsonObject d = delta.toObject();
    const QString reasoning = optionalString(d, "reasoning_content", &bad);
    const QString content = optionalString(d, "content", &bad);
    const QString finish = optionalString(choice, "finish_reason", &bad);
    if (bad) {
      fail(QStringLiteral("a stream chunk has a field of the wrong type: %1")
               .arg(QString::fromUtf8(json.left(120))));
      return;
    }
    if (!reasoning.isEmpty() && !inThink_) {
      text_ += QStringLiteral("<think>");
      inThink_ = true;
    }
    text_ += reasoning;
    if (!content.isEmpty() && inThink_) {
      text_ += QStringLiteral("</think>");
      inThink_ = false;
    }
    text_ += content;
    if (!finish.isEmpty()) finish_ = finish;
  }
  const QJsonValue usage = o.value(QLatin1String("usage"));
  if (usage.isObject()) {
    const QJsonObject u = usage.toObject();
    const int prompt = optionalCount(u, "prompt_tokens", &bad);
    const int completion = optionalCount(u, "completion_tokens", &bad);
    int cached = -1;
    const QJsonValue details = u.value(QLatin1String("prompt_tokens_details"));
    if (details.isObject()) cached = optionalCount(details.toObject(), "cached_tokens", &bad);
    if (bad || prompt < 0) {
      fail(QStringLiteral("the usage chunk is malformed: %1").arg(QString::fromUtf8(json.left(160))));
      return;
    }
    hasUsage_ = true;
    prompt_ = prompt;
    completion_ = std::max(completion, 0);
    cached_ = std::clamp(cached, 0, prompt);
  } else if (bad || (!usage.isUndefined() && !usage.isNull())) {
    fail(QStringLiteral("a stream chunk has a field of the wrong type: %1")
             .arg(QString::fromUtf8(json.left(120))));
    return;
  }
  ++chunks_;
}

QString OpenAiStream::takeText() {
  QString out;
  out.swap(text_);
  return out;
}

}  // namespace rc::gui
