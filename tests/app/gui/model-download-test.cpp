// ModelDownload against fake-hub.py, a local server that answers like the
// Hugging Face Hub (302 with X-Linked-Etag / X-Linked-Size, a CDN path with
// ranges). The oracle is the bytes the server was given and their SHA-256
// computed here; the Range headers are the ones the server logged.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "fake-hub.h"
#include "model-catalog.h"
#include "model-download.h"

namespace rc::gui {
namespace {

using rc::test::FakeHub;
using rc::test::HubFile;
using State = ModelDownload::State;

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

unsigned modeOf(const QString& path) {
  struct stat st;
  return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_mode & 0777 : 07777;
}

bool settle(ModelDownload& d, int ms = 30000) {
  return QTest::qWaitFor([&] { return d.state() == State::Done || d.state() == State::Failed; },
                         ms);
}

class DownloadTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(tmp_.isValid()); }
  QString dest(const QString& name = QStringLiteral("model-Q4_K_M.gguf")) const {
    return tmp_.filePath(QStringLiteral("models/") + name);
  }
  static ModelDownload::Options opts(const FakeHub& hub, const QString& dest,
                                     const HubFile& f = {}) {
    return {hubFileUrl(f.repo, f.file, hub.endpoint()), dest, QString()};
  }
  // What an earlier run leaves: DEST.part with `bytes` and DEST.part.json.
  void leavePart(const QByteArray& bytes, const QJsonObject& meta) const {
    QDir().mkpath(QFileInfo(dest()).absolutePath());
    for (const auto& [path, data] :
         {std::pair{ModelDownload::partPath(dest()), bytes},
          std::pair{ModelDownload::metaPath(dest()), QJsonDocument(meta).toJson()}}) {
      QFile out(path);
      ASSERT_TRUE(out.open(QIODevice::WriteOnly));
      ASSERT_EQ(out.write(data), data.size());
    }
  }
  QTemporaryDir tmp_;
};

TEST_F(DownloadTest, FollowsTheRedirectAndInstallsAVerifiedFile) {
  HubFile f;
  f.bytes = rc::test::randomBytes(1'500'000, 1);
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  ModelDownload d;
  QSignalSpy done(&d, &ModelDownload::finished);
  d.start(opts(hub, dest()));
  ASSERT_TRUE(settle(d)) << "state " << int(d.state()) << " received " << d.received() << " after "
                         << hub.requests().size() << " requests";
  ASSERT_EQ(d.state(), State::Done) << d.errorText().toStdString();
  ASSERT_EQ(done.count(), 1);
  EXPECT_EQ(done.at(0).at(0).toString(), dest());
  EXPECT_EQ(readAll(dest()), f.bytes);
  EXPECT_EQ(d.publishedSha256(), rc::test::sha256Hex(f.bytes));
  EXPECT_EQ(d.total(), f.bytes.size());
  EXPECT_FALSE(QFileInfo::exists(ModelDownload::partPath(dest())));
  EXPECT_FALSE(QFileInfo::exists(ModelDownload::metaPath(dest())));
  const QStringList reqs = hub.requests();
  ASSERT_EQ(reqs.size(), 2) << reqs.join(QLatin1Char('|')).toStdString();
  EXPECT_EQ(reqs[0], QStringLiteral("GET /org/model-GGUF/resolve/main/model-Q4_K_M.gguf -"));
  EXPECT_EQ(reqs[1], QStringLiteral("GET /cdn/0 -"));
}

TEST_F(DownloadTest, PauseKeepsThePartAndResumeAsksForTheRestFromItsLength) {
  HubFile f;
  f.bytes = rc::test::randomBytes(3 << 20, 2);
  f.stallAt = 1'000'000;  // the server sends this much, then waits
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  ModelDownload d;
  const mode_t oldUmask = ::umask(022);
  d.start(opts(hub, dest()));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return d.received() == 1'000'000 || d.state() == State::Failed; }, 30000));
  d.pause();
  ::umask(oldUmask);
  ASSERT_EQ(d.state(), State::Paused);
  // Owner-only under the default umask: the models folder, the .part and
  // its record.
  EXPECT_EQ(modeOf(QFileInfo(dest()).absolutePath()), 0700u);
  EXPECT_EQ(modeOf(ModelDownload::partPath(dest())), 0600u);
  EXPECT_EQ(modeOf(ModelDownload::metaPath(dest())), 0600u);
  const qint64 kept = QFileInfo(ModelDownload::partPath(dest())).size();
  EXPECT_EQ(kept, d.received());
  ASSERT_GT(kept, 0);
  ASSERT_LT(kept, f.bytes.size()) << "the download ended before it could be paused";
  EXPECT_EQ(readAll(ModelDownload::partPath(dest())), f.bytes.left(kept));
  EXPECT_FALSE(QFileInfo::exists(dest()));
  EXPECT_TRUE(d.canResume());

  d.resume();
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(d.state(), State::Done) << d.errorText().toStdString();
  EXPECT_EQ(readAll(dest()), f.bytes);
  const QStringList cdn = hub.rangesFor(QStringLiteral("/cdn/"));
  ASSERT_EQ(cdn.size(), 2) << cdn.join(QLatin1Char('|')).toStdString();
  EXPECT_EQ(cdn[0], QStringLiteral("-"));
  EXPECT_EQ(cdn[1], QStringLiteral("bytes=%1-").arg(kept));
}

TEST_F(DownloadTest, ContinuesAPartLeftByAnEarlierRun) {
  HubFile f;
  f.bytes = rc::test::randomBytes(1'000'000, 3);
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  const ModelDownload::Options o = opts(hub, dest());
  leavePart(f.bytes.left(700'000), QJsonObject{{"url", o.url.toString()},
                                               {"sha256", rc::test::sha256Hex(f.bytes)},
                                               {"size", double(f.bytes.size())}});

  ModelDownload d;
  d.start(o);
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(d.state(), State::Done) << d.errorText().toStdString();
  EXPECT_EQ(readAll(dest()), f.bytes);
  EXPECT_EQ(hub.rangesFor(QStringLiteral("/cdn/")), QStringList{QStringLiteral("bytes=700000-")});
}

TEST_F(DownloadTest, APartForAnotherUrlStartsOver) {
  HubFile f;
  f.bytes = rc::test::randomBytes(300'000, 4);
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  QDir().mkpath(QFileInfo(dest()).absolutePath());
  QFile part(ModelDownload::partPath(dest()));
  ASSERT_TRUE(part.open(QIODevice::WriteOnly));
  part.write(QByteArray(1000, 'x'));  // no record: not ours to continue
  part.close();
  ModelDownload d;
  d.start(opts(hub, dest()));
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(d.state(), State::Done) << d.errorText().toStdString();
  EXPECT_EQ(readAll(dest()), f.bytes);
  EXPECT_EQ(hub.rangesFor(QStringLiteral("/cdn/")), QStringList{QStringLiteral("-")});
}

TEST_F(DownloadTest, AConnectionLostMidTransferIsRetriedFromThePartOffset) {
  HubFile f;
  f.bytes = rc::test::randomBytes(2'000'000, 5);
  f.disconnectAt = 1'000'000;
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  ModelDownload d;
  d.setRetryDelayMs(0);
  d.start(opts(hub, dest()));
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(d.state(), State::Done) << d.errorText().toStdString();
  EXPECT_EQ(readAll(dest()), f.bytes);
  // The last request resumes at the cut. Under load Qt may resend the first
  // request once by itself when the connection drops before it read the
  // body (then nothing was kept and that attempt starts at 0 again).
  const QStringList cdn = hub.rangesFor(QStringLiteral("/cdn/"));
  ASSERT_GE(cdn.size(), 2) << cdn.join(QLatin1Char('|')).toStdString();
  ASSERT_LE(cdn.size(), 3) << cdn.join(QLatin1Char('|')).toStdString();
  EXPECT_EQ(cdn.front(), QStringLiteral("-"));
  EXPECT_EQ(cdn.back(), QStringLiteral("bytes=1000000-"));
  // The retry asks the Hub again (a CDN link may have expired meanwhile).
  EXPECT_GE(hub.rangesFor(QStringLiteral("/org/")).size(), 2);
}

TEST_F(DownloadTest, ARangeTheServerIgnoresRestartsTheFile) {
  HubFile f;
  f.bytes = rc::test::randomBytes(400'000, 6);
  f.ignoreRange = true;
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  const ModelDownload::Options o = opts(hub, dest());
  leavePart(f.bytes.left(100'000), QJsonObject{{"url", o.url.toString()}});
  ModelDownload d;
  d.start(o);
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(d.state(), State::Done) << d.errorText().toStdString();
  EXPECT_EQ(readAll(dest()), f.bytes);  // not 100 000 bytes twice
  EXPECT_EQ(hub.rangesFor(QStringLiteral("/cdn/")), QStringList{QStringLiteral("bytes=100000-")});
}

TEST_F(DownloadTest, CorruptContentIsRefusedAndNothingIsInstalled) {
  HubFile f;
  f.bytes = rc::test::randomBytes(500'000, 7);
  f.sha256 = rc::test::sha256Hex("something else");
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  ModelDownload d;
  QSignalSpy failed(&d, &ModelDownload::failed);
  d.start(opts(hub, dest()));
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(d.state(), State::Failed);
  ASSERT_EQ(failed.count(), 1);
  const QString msg = failed.at(0).at(0).toString();
  EXPECT_TRUE(msg.contains(QStringLiteral("damaged"))) << msg.toStdString();
  EXPECT_TRUE(msg.contains(rc::test::sha256Hex(f.bytes))) << msg.toStdString();
  EXPECT_TRUE(msg.contains(f.sha256)) << msg.toStdString();
  EXPECT_FALSE(QFileInfo::exists(dest()));
  EXPECT_FALSE(QFileInfo::exists(ModelDownload::partPath(dest())));
  EXPECT_FALSE(d.canResume());
}

TEST_F(DownloadTest, AServerThatIsDownGivesAClearOfflineMessage) {
  ModelDownload d;
  QSignalSpy failed(&d, &ModelDownload::failed);
  const QString endpoint = QStringLiteral("http://127.0.0.1:%1").arg(rc::test::closedPort());
  d.start(
      {hubFileUrl(QStringLiteral("org/m"), QStringLiteral("m.gguf"), endpoint), dest(), QString()});
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(d.state(), State::Failed);
  ASSERT_EQ(failed.count(), 1);
  const QString msg = failed.at(0).at(0).toString();
  EXPECT_TRUE(msg.contains(QStringLiteral("refused"))) << msg.toStdString();
  EXPECT_TRUE(msg.contains(QStringLiteral("offline"))) << msg.toStdString();
  EXPECT_FALSE(QFileInfo::exists(ModelDownload::partPath(dest())));
}

TEST(DownloadMessages, EachTransportFailureNamesTheHostAndSaysWhatToDo) {
  const QString dns = networkErrorMessage(QNetworkReply::HostNotFoundError,
                                          QStringLiteral("huggingface.co"), QString());
  EXPECT_TRUE(dns.contains(QStringLiteral("huggingface.co")));
  EXPECT_TRUE(dns.contains(QStringLiteral("offline")));
  EXPECT_TRUE(networkErrorMessage(QNetworkReply::TemporaryNetworkFailureError, "h", QString())
                  .contains(QStringLiteral("offline")));
  EXPECT_TRUE(networkErrorMessage(QNetworkReply::TimeoutError, "h", QString()).contains("Resume"));
  EXPECT_TRUE(networkErrorMessage(QNetworkReply::SslHandshakeFailedError, "h", "bad cert")
                  .contains("bad cert"));
}

TEST_F(DownloadTest, AFullDiskIsReported) {
  if (!QFileInfo::exists(QStringLiteral("/dev/full"))) GTEST_SKIP() << "no /dev/full";
  HubFile f;
  f.bytes = rc::test::randomBytes(200'000, 8);
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  QDir().mkpath(QFileInfo(dest()).absolutePath());
  // Every write to the .part fails with ENOSPC, as on a full disk.
  ASSERT_TRUE(QFile::link(QStringLiteral("/dev/full"), ModelDownload::partPath(dest())));
  ModelDownload d;
  QSignalSpy failed(&d, &ModelDownload::failed);
  d.start(opts(hub, dest()));
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(failed.count(), 1);
  const QString msg = failed.at(0).at(0).toString();
  EXPECT_TRUE(msg.contains(QStringLiteral("disk full"))) << msg.toStdString();
  EXPECT_TRUE(msg.contains(QStringLiteral("No space left"))) << msg.toStdString();
  EXPECT_FALSE(QFileInfo::exists(dest()));
}

TEST_F(DownloadTest, TooLittleFreeSpaceStopsBeforeWriting) {
  HubFile f;
  f.bytes = rc::test::randomBytes(200'000, 9);
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  ModelDownload d;
  d.setFreeSpaceProbe([](const QString&) { return qint64(50'000); });
  QSignalSpy failed(&d, &ModelDownload::failed);
  d.start(opts(hub, dest()));
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(failed.count(), 1);
  const QString msg = failed.at(0).at(0).toString();
  EXPECT_TRUE(msg.contains(QStringLiteral("Not enough disk space"))) << msg.toStdString();
  EXPECT_EQ(QFileInfo(ModelDownload::partPath(dest())).size(), 0);
}

TEST_F(DownloadTest, AGatedRepositorySaysSo) {
  HubFile f;
  f.bytes = "x";
  f.status = 401;
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  ModelDownload d;
  d.start(opts(hub, dest()));
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(d.state(), State::Failed);
  EXPECT_TRUE(d.errorText().contains(QStringLiteral("gated"))) << d.errorText().toStdString();
  EXPECT_TRUE(hub.rangesFor(QStringLiteral("/cdn/")).isEmpty());
}

TEST_F(DownloadTest, APinnedHashTheHubDisagreesWithStopsTheDownload) {
  HubFile f;
  f.bytes = rc::test::randomBytes(100'000, 10);
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  ModelDownload d;
  ModelDownload::Options o = opts(hub, dest());
  o.pinnedSha256 = rc::test::sha256Hex("pinned");
  d.start(o);
  ASSERT_TRUE(settle(d));
  ASSERT_EQ(d.state(), State::Failed);
  EXPECT_TRUE(d.errorText().contains(QStringLiteral("catalog expects")))
      << d.errorText().toStdString();
  EXPECT_TRUE(hub.rangesFor(QStringLiteral("/cdn/")).isEmpty());
  EXPECT_FALSE(QFileInfo::exists(dest()));
}

TEST_F(DownloadTest, CancelDeletesThePart) {
  HubFile f;
  f.bytes = rc::test::randomBytes(3 << 20, 11);
  f.stallAt = 300'000;
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  ModelDownload d;
  d.start(opts(hub, dest()));
  ASSERT_TRUE(QTest::qWaitFor([&] { return d.received() == 300'000 || d.state() == State::Failed; },
                              30000));
  ASSERT_TRUE(QFileInfo::exists(ModelDownload::partPath(dest())));
  d.cancel();
  EXPECT_EQ(d.state(), State::Idle);
  EXPECT_FALSE(QFileInfo::exists(ModelDownload::partPath(dest())));
  EXPECT_FALSE(QFileInfo::exists(ModelDownload::metaPath(dest())));
  EXPECT_FALSE(QFileInfo::exists(dest()));
}

}  // namespace
}  // namespace rc::gui
