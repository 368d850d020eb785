// The desktop app end to end, as a user starts it: under xvfb-run (a real
// X server, so the cache panel's OpenGL works), with a fresh data folder,
// send "Hello", wait for the reply, save a screenshot and quit. Checks the
// PNG and that the reply is in the database.
#include <gtest/gtest.h>
#include <QDir>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>

#include "chat-test-util.h"
#include "store/store.h"

namespace {

TEST(GuiSmoke, SendsHelloAndSavesAScreenshot) {
  if (!rc::test::haveTestModel()) GTEST_SKIP() << "no model at " << rc::test::testModelPath();
  const QString xvfb = QStandardPaths::findExecutable("xvfb-run");
  if (xvfb.isEmpty()) GTEST_SKIP() << "xvfb-run is not installed";

  const QString dataDir = QStringLiteral(RADIXCHAT_TEST_OUT "/gui-smoke-data");
  const QString shot = QStringLiteral(RADIXCHAT_TEST_OUT "/gui-smoke.png");
  QDir(dataDir).removeRecursively();
  QFile::remove(shot);

  QProcess app;
  app.setProcessChannelMode(QProcess::MergedChannels);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove("QT_QPA_PLATFORM");  // xcb on the Xvfb display
  app.setProcessEnvironment(env);
  app.start(xvfb,
            {"-a", "-s", "-screen 0 1280x800x24", QStringLiteral(RADIXCHAT_GUI_EXE), "--data-dir",
             dataDir, "--send", "Hello", "--screenshot", shot, "--quit-after-reply"});
  ASSERT_TRUE(app.waitForStarted(10000));
  const bool done = app.waitForFinished(240000);
  const std::string output = app.readAll().toStdString();
  ASSERT_TRUE(done) << "radixchat did not finish\n" << output;
  ASSERT_EQ(app.exitStatus(), QProcess::NormalExit) << output;
  ASSERT_EQ(app.exitCode(), 0) << output;

  QImage image(shot);
  ASSERT_FALSE(image.isNull()) << "no screenshot at " << shot.toStdString() << "\n" << output;
  EXPECT_GE(image.width(), 1000);
  EXPECT_GE(image.height(), 600);

  auto store = rc::store::Store::open((dataDir + "/radixchat.db").toStdString());
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto conversations = store.value()->list_conversations();
  ASSERT_TRUE(conversations.ok());
  ASSERT_EQ(conversations->size(), 1u);
  auto thread = store.value()->current_thread(conversations->front().id);
  ASSERT_TRUE(thread.ok());
  ASSERT_EQ(thread->size(), 2u);
  EXPECT_EQ(thread->at(0).content, "Hello");
  EXPECT_EQ(thread->at(1).role, rc::store::Role::assistant);
  EXPECT_FALSE(thread->at(1).content.empty());
  ASSERT_TRUE(thread->at(1).metrics.has_value());
  EXPECT_GT(thread->at(1).metrics->completion_tokens, 0);
}

}  // namespace
