// The desktop app end to end, as a user starts it: under xvfb-run (a real
// X server, so the cache panel's OpenGL works), with a fresh data folder,
// send "Hello", wait for the reply, save a screenshot and quit. Checks what
// the screenshot shows (not just its size: a black window must fail) and
// that the reply is in the database.
#include <gtest/gtest.h>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>
#include <cstdlib>

#include "chat-test-util.h"
#include "require-test-model.h"
#include "skip-or-fail.h"
#include "store/store.h"

namespace {

// Colours the app paints (app/gui/app-style.cpp, ui/panel/cache-panel-gl.cpp).
const QColor kUserBubble(0xdb, 0xe7, 0xfd);
const QColor kChatBackground(0xf7, 0xf8, 0xfa);
const QColor kPanelCanvas(22, 25, 32);  // the panel's GL clear colour

bool near(QRgb p, const QColor& c, int tol = 3) {
  return std::abs(qRed(p) - c.red()) <= tol && std::abs(qGreen(p) - c.green()) <= tol &&
         std::abs(qBlue(p) - c.blue()) <= tol;
}

// Pixels of colour c, and the rectangle that holds them.
struct ColourArea {
  int64_t pixels = 0;
  QRect box;
};

ColourArea find_colour(const QImage& img, const QColor& c) {
  ColourArea a;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x)
      if (near(img.pixel(x, y), c)) {
        ++a.pixels;
        a.box = a.box.united(QRect(x, y, 1, 1));
      }
  return a;
}

// Dark pixels (text) inside r.
int64_t dark_pixels(const QImage& img, const QRect& r) {
  int64_t n = 0;
  for (int y = r.top(); y <= r.bottom(); ++y)
    for (int x = r.left(); x <= r.right(); ++x)
      if (qGray(img.pixel(x, y)) < 110) ++n;
  return n;
}

// The window as a user would see it after one exchange: the chat pane's
// background, the user's bubble with text in it, and the cache panel drawn
// through OpenGL (its dark canvas on the right; the no-OpenGL fallback is a
// text label on the window background and has none of it).
void expect_screenshot_content(const QImage& img) {
  const int64_t area = int64_t{img.width()} * img.height();
  const ColourArea chat = find_colour(img, kChatBackground);
  EXPECT_GT(chat.pixels, area / 20) << "the chat pane's background is missing";

  const ColourArea bubble = find_colour(img, kUserBubble);
  ASSERT_GT(bubble.pixels, 2000) << "no user bubble";
  EXPECT_LT(bubble.box.right(), img.width() * 3 / 4) << "user bubble outside the chat pane";
  EXPECT_GT(dark_pixels(img, bubble.box), 40) << "the user bubble has no text";

  const ColourArea canvas = find_colour(img, kPanelCanvas);
  EXPECT_GT(canvas.pixels, area / 25) << "the cache panel did not draw (no-OpenGL fallback?)";
  EXPECT_GT(canvas.box.left(), img.width() / 2) << "panel canvas colour outside the panel";
}

TEST(GuiSmoke, SendsHelloAndSavesAScreenshot) {
  RC_REQUIRE_TEST_MODEL();
  const QString xvfb = QStandardPaths::findExecutable("xvfb-run");
  if (xvfb.isEmpty()) RC_SKIP_OR_FAIL("xvfb-run is not installed");

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
  expect_screenshot_content(image.convertToFormat(QImage::Format_RGB32));

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

// The hidden --regenerate flag (docs screenshots of drafted decoding): after
// the sent message's reply, the last reply is regenerated once, so the
// question has two sibling replies, and the screenshot waits for the second.
TEST(GuiSmoke, RegenerateAddsASiblingReplyBeforeTheScreenshot) {
  RC_REQUIRE_TEST_MODEL();
  const QString xvfb = QStandardPaths::findExecutable("xvfb-run");
  if (xvfb.isEmpty()) RC_SKIP_OR_FAIL("xvfb-run is not installed");

  const QString dataDir = QStringLiteral(RADIXCHAT_TEST_OUT "/gui-smoke-regenerate");
  const QString shot = QStringLiteral(RADIXCHAT_TEST_OUT "/gui-smoke-regenerate.png");
  QDir(dataDir).removeRecursively();
  QFile::remove(shot);
  ASSERT_TRUE(QDir().mkpath(dataDir));
  {
    QFile settings(dataDir + "/settings.ini");  // Model > Drafted decoding on
    ASSERT_TRUE(settings.open(QIODevice::WriteOnly));
    settings.write("[models]\ndrafted=true\n");
  }
  QProcess app;
  app.setProcessChannelMode(QProcess::MergedChannels);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove("QT_QPA_PLATFORM");
  app.setProcessEnvironment(env);
  app.start(xvfb, {"-a", "-s", "-screen 0 1280x800x24", QStringLiteral(RADIXCHAT_GUI_EXE),
                   "--data-dir", dataDir, "--send", "What is a KV cache?", "--regenerate",
                   "--screenshot", shot, "--quit-after-reply"});
  ASSERT_TRUE(app.waitForStarted(10000));
  const bool done = app.waitForFinished(240000);
  const std::string output = app.readAll().toStdString();
  ASSERT_TRUE(done) << "radixchat did not finish\n" << output;
  ASSERT_EQ(app.exitCode(), 0) << output;
  EXPECT_FALSE(QImage(shot).isNull()) << output;

  auto store = rc::store::Store::open((dataDir + "/radixchat.db").toStdString());
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto conversations = store.value()->list_conversations();
  ASSERT_TRUE(conversations.ok());
  ASSERT_EQ(conversations->size(), 1u);
  const rc::store::Id conv = conversations->front().id;
  auto thread = store.value()->current_thread(conv);
  ASSERT_TRUE(thread.ok());
  ASSERT_EQ(thread->size(), 2u);
  auto replies = store.value()->children(conv, thread->at(0).id);
  ASSERT_TRUE(replies.ok());
  EXPECT_EQ(replies->size(), 2u) << "the reply and its regeneration";
  EXPECT_EQ(thread->at(1).id, replies->back().id) << "the regeneration is shown";
}

}  // namespace
