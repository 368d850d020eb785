#include "model-download.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QNetworkAccessManager>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QStorageInfo>
#include <QTimer>

#include "radixchat/private-files.h"

namespace rc::gui {

namespace {

constexpr qint64 kHashChunk = 4 << 20;  // bytes hashed per event-loop turn
constexpr int kMaxHops = 5;
// Mode of the .part and its record when QFile creates them (0600).
constexpr QFileDevice::Permissions kOwnerOnly = QFileDevice::ReadOwner | QFileDevice::WriteOwner;

// X-Linked-Etag / ETag -> lowercase SHA-256 hex, or empty when the value is
// not one (a git blob id of a small non-LFS file is 40 hex digits).
QString shaFromEtag(QByteArray v) {
  v = v.trimmed();
  if (v.startsWith("W/")) v = v.mid(2);
  if (v.size() >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.mid(1, v.size() - 2);
  static const QRegularExpression hex(QStringLiteral("^[0-9a-fA-F]{64}$"));
  const QString s = QString::fromLatin1(v);
  return hex.match(s).hasMatch() ? s.toLower() : QString();
}

bool transient(QNetworkReply::NetworkError e) {
  switch (e) {
    case QNetworkReply::RemoteHostClosedError:
    case QNetworkReply::TimeoutError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::InternalServerError:
    case QNetworkReply::ServiceUnavailableError:
      return true;
    default:
      return false;
  }
}

QString gb(qint64 bytes) {
  return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeSIFormat);
}

}  // namespace

QString networkErrorMessage(QNetworkReply::NetworkError error, const QString& host,
                            const QString& detail) {
  switch (error) {
    case QNetworkReply::HostNotFoundError:
      return QObject::tr(
                 "Cannot find %1 — this computer seems to be offline (the name lookup "
                 "failed). Check the network connection and try again.")
          .arg(host);
    case QNetworkReply::ConnectionRefusedError:
      return QObject::tr(
                 "Cannot connect to %1: the connection was refused. You may be offline, "
                 "or a proxy or firewall blocks it.")
          .arg(host);
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
      return QObject::tr(
          "The network is not available (offline?). The partial download is kept; "
          "press Resume when you are back online.");
    case QNetworkReply::TimeoutError:
      return QObject::tr(
                 "%1 stopped answering. The partial download is kept; press Resume to "
                 "continue.")
          .arg(host);
    case QNetworkReply::RemoteHostClosedError:
      return QObject::tr(
                 "%1 closed the connection. The partial download is kept; press Resume to "
                 "continue.")
          .arg(host);
    case QNetworkReply::SslHandshakeFailedError:
      return QObject::tr("The secure connection to %1 failed (%2).").arg(host, detail);
    default:
      return QObject::tr("The download from %1 failed: %2").arg(host, detail);
  }
}

ModelDownload::ModelDownload(QObject* parent)
    : QObject(parent), nam_(new QNetworkAccessManager(this)) {
  freeSpace_ = [](const QString& dir) { return QStorageInfo(dir).bytesAvailable(); };
}

ModelDownload::~ModelDownload() { stopReply(); }

void ModelDownload::setState(State s) {
  if (s == state_) return;
  state_ = s;
  emit stateChanged(s);
}

void ModelDownload::fail(const QString& message, bool keepPart) {
  stopReply();
  part_.close();
  // Nothing worth keeping: an empty .part would only clutter the folder.
  if (!keepPart || offset_ == 0) removePart();
  error_ = message;
  setState(State::Failed);
  emit failed(message);
}

void ModelDownload::stopReply() {
  if (!reply_) return;
  QNetworkReply* r = reply_;
  reply_ = nullptr;  // its finished() (from abort) must find nothing to do
  r->disconnect(this);
  r->abort();
  r->deleteLater();
}

void ModelDownload::removePart() {
  part_.close();
  QFile::remove(partPath(options_.destination));
  QFile::remove(metaPath(options_.destination));
  offset_ = 0;
  hash_.reset();
}

void ModelDownload::start(const Options& options) {
  stopReply();
  part_.close();
  options_ = options;
  options_.pinnedSha256 = options.pinnedSha256.toLower();
  offset_ = 0;
  total_ = -1;
  hubSha_.clear();
  error_.clear();
  hash_.reset();
  retries_ = 0;
  restartedOnce_ = false;
  const QString dir = QFileInfo(options_.destination).absolutePath();
  if (!rc::make_private_dir(dir.toStdString()).ok()) {
    fail(tr("Cannot create the folder %1.").arg(dir), true);
    return;
  }
  // A .part is continued only when its record names the same URL.
  QFile meta(metaPath(options_.destination));
  bool same = false;
  if (meta.open(QIODevice::ReadOnly)) {
    const QJsonObject o = QJsonDocument::fromJson(meta.readAll()).object();
    same = o.value(QLatin1String("url")).toString() == options_.url.toString();
    if (same) {
      hubSha_ = o.value(QLatin1String("sha256")).toString();
      total_ = static_cast<qint64>(o.value(QLatin1String("size")).toDouble(-1));
    }
  }
  if (!openPart()) return;
  if (!same && part_.size() > 0) {
    part_.close();
    QFile::remove(partPath(options_.destination));
    if (!openPart()) return;
  }
  if (part_.size() > 0) {
    setState(State::Checking);
    hashExistingPart();
  } else {
    send(options_.url);
  }
}

bool ModelDownload::openPart() {
  part_.setFileName(partPath(options_.destination));
  // Owner-only from creation (the user's downloads are nobody else's).
  if (!part_.open(QIODevice::ReadWrite, kOwnerOnly)) {
    fail(tr("Cannot write %1: %2").arg(part_.fileName(), part_.errorString()), true);
    return false;
  }
  return true;
}

// Hashes the .part's bytes in chunks, one per event-loop turn, then sends.
void ModelDownload::hashExistingPart() {
  if (state_ != State::Checking) return;  // paused or cancelled meanwhile
  const QByteArray chunk = part_.read(kHashChunk);
  if (!chunk.isEmpty()) {
    hash_.addData(chunk);
    offset_ += chunk.size();
    emit progress(offset_, total_);
    QTimer::singleShot(0, this, &ModelDownload::hashExistingPart);
    return;
  }
  if (part_.error() != QFileDevice::NoError) {
    fail(tr("Cannot read %1: %2").arg(part_.fileName(), part_.errorString()), false);
    return;
  }
  send(options_.url);
}

void ModelDownload::send(const QUrl& url) {
  if (url == options_.url) hops_ = 0;  // a new attempt (redirects are other URLs)
  QNetworkRequest req(url);
  req.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
  req.setRawHeader("Accept-Encoding", "identity");
  req.setHeader(QNetworkRequest::UserAgentHeader,
                QStringLiteral("RadixChat/%1").arg(QCoreApplication::applicationVersion()));
  if (offset_ > 0) req.setRawHeader("Range", "bytes=" + QByteArray::number(offset_) + "-");
  req.setTransferTimeout(transferTimeoutMs_);
  headersTaken_ = redirected_ = bodyWanted_ = gotBytes_ = false;
  setState(State::Connecting);
  reply_ = nam_->get(req);
  connect(reply_, &QNetworkReply::readyRead, this, &ModelDownload::onReadyRead);
  connect(reply_, &QNetworkReply::finished, this, &ModelDownload::onFinished);
}

// Reads the status and headers of the current reply once. Returns false
// when the download failed (and was stopped) because of them.
bool ModelDownload::takeHeaders() {
  if (headersTaken_) return true;
  headersTaken_ = true;
  const int status = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  const QString linked = shaFromEtag(reply_->rawHeader("X-Linked-Etag"));
  QString sha = linked;
  if (sha.isEmpty() && (status == 200 || status == 206))
    sha = shaFromEtag(reply_->rawHeader("ETag"));
  bool okSize = false;
  const qint64 linkedSize = reply_->rawHeader("X-Linked-Size").toLongLong(&okSize);
  if (!sha.isEmpty() && hubSha_ != sha) {
    if (!hubSha_.isEmpty() && offset_ > 0) {
      // The file changed on the Hub since the .part began: start over.
      part_.resize(0);
      part_.seek(0);
      hash_.reset();
      offset_ = 0;
    }
    hubSha_ = sha;
  }
  if (!options_.pinnedSha256.isEmpty() && !hubSha_.isEmpty() && hubSha_ != options_.pinnedSha256) {
    fail(tr("The catalog expects SHA-256 %1 but the Hub now publishes %2 for this file; "
            "nothing was downloaded.")
             .arg(options_.pinnedSha256, hubSha_),
         false);
    return false;
  }
  if (okSize && linkedSize >= 0) total_ = linkedSize;
  redirected_ = status >= 300 && status < 400;
  if (status == 200 && offset_ > 0) {
    // The range was ignored: the body is the whole file.
    part_.resize(0);
    part_.seek(0);
    hash_.reset();
    offset_ = 0;
  }
  if (status == 206) {
    static const QRegularExpression cr(QStringLiteral("^bytes (\\d+)-(\\d+)/(\\d+|\\*)$"));
    const auto m = cr.match(QString::fromLatin1(reply_->rawHeader("Content-Range")).trimmed());
    if (!m.hasMatch() || m.captured(1).toLongLong() != offset_) {
      fail(tr("The server resumed at the wrong place (%1, expected byte %2).")
               .arg(QString::fromLatin1(reply_->rawHeader("Content-Range")))
               .arg(offset_),
           false);
      return false;
    }
    if (m.captured(3) != QLatin1String("*")) total_ = m.captured(3).toLongLong();
  } else if (status == 200) {
    const QVariant len = reply_->header(QNetworkRequest::ContentLengthHeader);
    if (len.isValid()) total_ = len.toLongLong();
  }
  bodyWanted_ = status == 200 || status == 206;
  if (bodyWanted_) {
    if (!part_.isOpen() && !openPart()) return false;
    part_.seek(offset_);
    writeMeta();
    const QString dir = QFileInfo(options_.destination).absolutePath();
    const qint64 free = freeSpace_ ? freeSpace_(dir) : -1;
    if (total_ > 0 && free >= 0 && free < total_ - offset_) {
      fail(tr("Not enough disk space in %1: the model needs %2 more, %3 is free.")
               .arg(dir, gb(total_ - offset_), gb(free)),
           true);
      return false;
    }
    setState(State::Downloading);
  }
  return true;
}

void ModelDownload::onReadyRead() {
  if (!reply_ || !takeHeaders()) return;
  const QByteArray data = reply_->readAll();
  if (!bodyWanted_ || data.isEmpty()) return;
  const qint64 n = part_.write(data);
  if (n != data.size() || !part_.flush()) {
    fail(tr("Cannot write %1: %2 (disk full?). The partial download is kept.")
             .arg(part_.fileName(), part_.errorString()),
         true);
    return;
  }
  hash_.addData(data);
  offset_ += n;
  gotBytes_ = true;
  emit progress(offset_, total_);
}

void ModelDownload::onFinished() {
  QNetworkReply* r = reply_;
  if (!r || sender() != r) return;
  if (r->bytesAvailable() > 0) onReadyRead();
  if (!reply_) return;  // failed while writing
  if (r->attribute(QNetworkRequest::HttpStatusCodeAttribute).isValid() && !takeHeaders()) return;
  QNetworkReply::NetworkError err = r->error();
  // Our own aborts never get here (stopReply disconnects first), so a
  // cancelled reply is Qt's transfer timeout: no bytes for a while.
  if (err == QNetworkReply::OperationCanceledError) err = QNetworkReply::TimeoutError;
  const int status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  const QString detail = r->errorString();
  reply_ = nullptr;
  r->deleteLater();
  if (err != QNetworkReply::NoError && err < QNetworkReply::ContentAccessDenied) {
    retryOrFail(err, detail);  // transport: 1-199 (network, proxy)
    return;
  }
  if (redirected_) {
    // Raw header: QNetworkRequest::LocationHeader drops relative URLs.
    const QUrl location(QString::fromUtf8(r->rawHeader("Location")).trimmed());
    const QUrl next = r->url().resolved(location);
    if (location.isEmpty() || !next.isValid() || next == r->url() || next == options_.url ||
        ++hops_ > kMaxHops) {
      fail(tr("The Hub's redirect for this file was not usable (%1 hops).").arg(hops_), true);
      return;
    }
    send(next);
    return;
  }
  if (status == 416) {
    // The .part already holds every byte, or more than the file now has.
    if (total_ >= 0 && offset_ == total_) {
      verifyAndInstall();
    } else if (!restartedOnce_) {
      restartedOnce_ = true;
      part_.resize(0);
      hash_.reset();
      offset_ = 0;
      send(options_.url);
    } else {
      fail(tr("The server refused the byte range twice; the download was reset."), false);
    }
    return;
  }
  if (status == 401 || status == 403) {
    fail(tr("The Hub refused the file (HTTP %1). The repository may be gated: accept its "
            "license on huggingface.co, or pick another model.")
             .arg(status),
         false);
    return;
  }
  if (status == 404) {
    fail(tr("The Hub has no such file (HTTP 404): %1").arg(options_.url.toString()), false);
    return;
  }
  if (!bodyWanted_ || err != QNetworkReply::NoError) {
    if (status >= 500) {
      retryOrFail(QNetworkReply::ServiceUnavailableError, tr("HTTP %1").arg(status));
      return;
    }
    fail(tr("The server answered HTTP %1 (%2).").arg(status).arg(detail), true);
    return;
  }
  if (total_ >= 0 && offset_ < total_) {
    retryOrFail(QNetworkReply::RemoteHostClosedError, tr("the transfer ended early"));
    return;
  }
  verifyAndInstall();
}

void ModelDownload::retryOrFail(QNetworkReply::NetworkError error, const QString& detail) {
  if (gotBytes_) retries_ = 0;  // progress since the last failure: a fresh budget
  const QString host = options_.url.host();
  if (!transient(error) || retries_ >= maxRetries_) {
    fail(networkErrorMessage(error, host, detail), true);
    return;
  }
  ++retries_;
  setState(State::Connecting);
  QTimer::singleShot(retryDelayMs_, this, [this] {
    if (state_ == State::Connecting && !reply_) send(options_.url);
  });
}

void ModelDownload::verifyAndInstall() {
  setState(State::Verifying);
  part_.close();
  const QString got = QString::fromLatin1(hash_.result().toHex());
  if (hubSha_.isEmpty()) {
    fail(tr("The Hub published no SHA-256 for this file, so it cannot be checked; it was not "
            "installed."),
         false);
    return;
  }
  if (got != hubSha_) {
    fail(tr("The downloaded file is damaged: its SHA-256 is %1 but the Hub publishes %2. It was "
            "deleted; try again.")
             .arg(got, hubSha_),
         false);
    return;
  }
  const QString dest = options_.destination;
  QFile::remove(dest);
  if (!QFile::rename(partPath(dest), dest)) {
    fail(tr("Cannot move the finished download to %1.").arg(dest), true);
    return;
  }
  QFile::remove(metaPath(dest));
  setState(State::Done);
  emit finished(dest);
}

void ModelDownload::writeMeta() const {
  QFile meta(metaPath(options_.destination));
  if (!meta.open(QIODevice::WriteOnly | QIODevice::Truncate, kOwnerOnly))
    return;  // resume then restarts
  QJsonObject o;
  o.insert(QLatin1String("url"), options_.url.toString());
  o.insert(QLatin1String("sha256"), hubSha_);
  o.insert(QLatin1String("size"), static_cast<double>(total_));
  meta.write(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

void ModelDownload::pause() {
  if (state_ != State::Connecting && state_ != State::Downloading && state_ != State::Checking)
    return;
  stopReply();
  if (state_ == State::Checking) {
    // Half-hashed: the next resume hashes from the start again.
    hash_.reset();
    offset_ = 0;
  }
  part_.close();
  setState(State::Paused);
}

void ModelDownload::resume() {
  if (!canResume()) return;
  error_.clear();
  retries_ = 0;
  if (!openPart()) return;
  if (part_.size() != offset_) {
    // The .part is not what was hashed (a pause while checking, or it was
    // touched): hash it again from the start.
    hash_.reset();
    offset_ = 0;
    setState(State::Checking);
    hashExistingPart();
    return;
  }
  send(options_.url);
}

void ModelDownload::cancel() {
  stopReply();
  removePart();
  setState(State::Idle);
}

}  // namespace rc::gui
