// ModelDownload: fetches one file from the Hugging Face Hub (or a server
// that speaks the same way) into a folder, resumably, and installs it only
// after its SHA-256 matched the hash the Hub publishes. No widgets: the
// "Get a model…" dialog drives it, and tests drive it against a local server.
//
// How the Hub is spoken to (checked against huggingface_hub's file_download
// and other clients; see docs/models.md, "Getting a model"):
//  - GET {endpoint}/{repo}/resolve/main/{file}. For an LFS/Xet file the Hub
//    answers 302 to a CDN URL and puts the file's SHA-256 in X-Linked-Etag
//    (quoted, maybe W/-prefixed) and its size in X-Linked-Size. Redirects are
//    followed by hand (at most 5) so those headers can be read; a 200 with
//    no redirect may carry them itself.
//  - Bytes go to DEST.part; DEST.part.json records the URL, hash and size,
//    so a later run (or Resume after a failure) continues with
//    "Range: bytes=N-" on the .part's length. A 206 must start at N; a 200
//    means the server ignored the range: the .part starts over. A hash that
//    changed on the Hub since the .part began also starts over.
//  - The SHA-256 is computed while writing (an existing .part is hashed
//    first, in chunks, between events). Match: DEST.part is renamed to
//    DEST. Mismatch: the .part is deleted and failed() says so. A file with
//    no published SHA-256 is not installed. Accept-Encoding is identity so
//    byte offsets are the file's.
//  - A connection lost mid-transfer is retried from the .part offset up to
//    maxRetries times in a row without progress; "cannot resolve the host"
//    and "connection refused" fail at once with a message that says
//    offline. Before writing, free space in the folder is checked against
//    the bytes still to come; a failed write says the disk is full.
//
// GUI thread (or any thread with an event loop); one download per object.
#pragma once

#include <QCryptographicHash>
#include <QFile>
#include <QNetworkReply>
#include <QObject>
#include <QPointer>
#include <QUrl>
#include <functional>

class QNetworkAccessManager;

namespace rc::gui {

class ModelDownload : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Checking, Connecting, Downloading, Paused, Verifying, Done, Failed };
  Q_ENUM(State)

  struct Options {
    QUrl url;              // the Hub's resolve URL
    QString destination;   // the installed file's path
    QString pinnedSha256;  // optional: must equal the Hub's hash too
  };

  explicit ModelDownload(QObject* parent = nullptr);
  ~ModelDownload() override;

  // Starts (or continues a .part an earlier run left for the same URL).
  void start(const Options& options);
  // Stops the transfer and keeps the .part; resume() continues it.
  void pause();
  void resume();
  // Stops and deletes the .part.
  void cancel();

  State state() const { return state_; }
  qint64 received() const { return offset_; }
  qint64 total() const { return total_; }  // -1 until known
  QString errorText() const { return error_; }
  QString publishedSha256() const { return hubSha_; }
  bool canResume() const {
    return state_ == State::Paused || (state_ == State::Failed && offset_ > 0);
  }

  static QString partPath(const QString& destination) {
    return destination + QStringLiteral(".part");
  }
  static QString metaPath(const QString& destination) {
    return destination + QStringLiteral(".part.json");
  }

  // Seams for tests: free bytes in a folder (default QStorageInfo), the
  // wait before a retry, the retry budget and the stall timeout.
  void setFreeSpaceProbe(std::function<qint64(const QString& dir)> probe) {
    freeSpace_ = std::move(probe);
  }
  void setRetryDelayMs(int ms) { retryDelayMs_ = ms; }
  void setMaxRetries(int n) { maxRetries_ = n; }
  void setTransferTimeoutMs(int ms) { transferTimeoutMs_ = ms; }

 signals:
  void progress(qint64 received, qint64 total);
  void stateChanged(rc::gui::ModelDownload::State state);
  void finished(const QString& path);
  void failed(const QString& message);

 private:
  void setState(State s);
  void fail(const QString& message, bool keepPart);
  bool openPart();
  void hashExistingPart();
  void send(const QUrl& url);
  void onReadyRead();
  void onFinished();
  bool takeHeaders();  // false: the download failed or restarted
  void retryOrFail(QNetworkReply::NetworkError error, const QString& detail);
  void verifyAndInstall();
  void writeMeta() const;
  void removePart();
  void stopReply();

  QNetworkAccessManager* nam_;
  QPointer<QNetworkReply> reply_;
  Options options_;
  State state_ = State::Idle;
  QFile part_;
  QCryptographicHash hash_{QCryptographicHash::Sha256};
  qint64 offset_ = 0;  // bytes in the .part, all of them hashed
  qint64 total_ = -1;
  QString hubSha_;
  QString error_;
  bool headersTaken_ = false;
  bool redirected_ = false;     // this reply is a 3xx
  bool bodyWanted_ = false;     // this reply's body is the file
  bool gotBytes_ = false;       // this attempt wrote something
  bool restartedOnce_ = false;  // a 416 / changed hash started over
  int hops_ = 0;
  int retries_ = 0;
  int maxRetries_ = 3;
  int retryDelayMs_ = 1500;
  int transferTimeoutMs_ = 30000;
  std::function<qint64(const QString&)> freeSpace_;
};

// The sentence failed() shows for a transport error (offline, refused,
// TLS...), naming the host. Exposed for tests.
QString networkErrorMessage(QNetworkReply::NetworkError error, const QString& host,
                            const QString& detail);

}  // namespace rc::gui
