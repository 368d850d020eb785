// FakeHub: runs fake-hub.py (Debian's python3, no internet) on a free port
// of 127.0.0.1 with the given files, and reads back the requests it saw.
#pragma once

#include <QByteArray>
#include <QList>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

namespace rc::test {

struct HubFile {
  QString repo = QStringLiteral("org/model-GGUF");
  QString file = QStringLiteral("model-Q4_K_M.gguf");
  QByteArray bytes;
  QString sha256;  // what the Hub publishes; empty: the bytes' real SHA-256
  int status = 0;  // non-zero: the resolve URL answers this
  bool throttle = false;
  qint64 disconnectAt = -1;
  qint64 stallAt = -1;  // first CDN request: send this much, then nothing
  bool ignoreRange = false;
};

QByteArray randomBytes(qint64 n, quint32 seed);
QString sha256Hex(const QByteArray& bytes);

class FakeHub {
 public:
  explicit FakeHub(const QList<HubFile>& files);
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  bool ok() const { return port_ > 0; }
  QString error() const { return error_; }
  QString endpoint() const { return QStringLiteral("http://127.0.0.1:%1").arg(port_); }
  // "GET /path bytes=N-" lines (the Range header, "-" when none), in order.
  QStringList requests() const;
  // The Range header of each request whose path starts with `prefix`.
  QStringList rangesFor(const QString& prefix) const;

 private:
  QTemporaryDir dir_;
  QProcess proc_;
  int port_ = 0;
  QString error_;
};

// A port on 127.0.0.1 where nothing listens (bound, then released).
int closedPort();

}  // namespace rc::test
