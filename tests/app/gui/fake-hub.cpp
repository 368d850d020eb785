#include "fake-hub.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpServer>

namespace rc::test {

QByteArray randomBytes(qint64 n, quint32 seed) {
  QRandomGenerator rng(seed);
  QByteArray out(n, Qt::Uninitialized);
  for (qint64 i = 0; i < n; ++i) out[i] = char(rng.bounded(256));
  return out;
}

QString sha256Hex(const QByteArray& bytes) {
  return QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
}

FakeHub::FakeHub(const QList<HubFile>& files) {
  QJsonArray arr;
  for (int i = 0; i < files.size(); ++i) {
    const HubFile& f = files[i];
    const QString blob = dir_.filePath(QStringLiteral("blob-%1").arg(i));
    QFile out(blob);
    if (!out.open(QIODevice::WriteOnly) || out.write(f.bytes) != f.bytes.size()) {
      error_ = QStringLiteral("cannot write ") + blob;
      return;
    }
    QJsonObject o;
    o.insert(QStringLiteral("repo"), f.repo);
    o.insert(QStringLiteral("file"), f.file);
    o.insert(QStringLiteral("blob"), blob);
    o.insert(QStringLiteral("sha256"), f.sha256.isEmpty() ? sha256Hex(f.bytes) : f.sha256);
    if (f.status) o.insert(QStringLiteral("status"), f.status);
    o.insert(QStringLiteral("throttle"), f.throttle);
    o.insert(QStringLiteral("disconnect_at"), double(f.disconnectAt));
    o.insert(QStringLiteral("stall_at"), double(f.stallAt));
    o.insert(QStringLiteral("ignore_range"), f.ignoreRange);
    arr.append(o);
  }
  QJsonObject config;
  config.insert(QStringLiteral("files"), arr);
  config.insert(QStringLiteral("log"), dir_.filePath(QStringLiteral("requests.log")));
  QFile cfg(dir_.filePath(QStringLiteral("config.json")));
  if (!cfg.open(QIODevice::WriteOnly)) {
    error_ = QStringLiteral("cannot write the config");
    return;
  }
  cfg.write(QJsonDocument(config).toJson());
  cfg.close();
  proc_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  proc_.start(
      QStringLiteral("python3"),
      {QStringLiteral(RADIXCHAT_SOURCE_DIR "/tests/app/gui/fake-hub.py"), cfg.fileName()});
  if (!proc_.waitForStarted(10000)) {
    error_ = QStringLiteral("python3 did not start: ") + proc_.errorString();
    return;
  }
  QByteArray line;
  while (!line.contains('\n') && proc_.waitForReadyRead(15000)) line += proc_.readAll();
  if (!line.startsWith("PORT ")) {
    error_ = QStringLiteral("fake-hub.py said: ") + QString::fromUtf8(line);
    return;
  }
  port_ = line.mid(5).trimmed().toInt();
}

FakeHub::~FakeHub() {
  if (proc_.state() != QProcess::NotRunning) {
    proc_.kill();
    proc_.waitForFinished(5000);
  }
}

QStringList FakeHub::requests() const {
  QFile f(dir_.filePath(QStringLiteral("requests.log")));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

QStringList FakeHub::rangesFor(const QString& prefix) const {
  QStringList out;
  for (const QString& line : requests()) {
    const QStringList parts = line.split(QLatin1Char(' '));
    if (parts.size() == 3 && parts[1].startsWith(prefix)) out << parts[2];
  }
  return out;
}

int closedPort() {
  QTcpServer s;
  if (!s.listen(QHostAddress::LocalHost, 0)) return 1;  // port 1: nothing listens either
  const int port = s.serverPort();
  s.close();
  return port;
}

}  // namespace rc::test
