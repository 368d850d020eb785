// The "Get a model…" dialog driven like a user: pick a row, press Download,
// the file arrives (from fake-hub.py) and modelReady names it; offline, the
// status line says so. Offscreen Qt platform (qt-test-main.cpp).
#include <gtest/gtest.h>

#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include "fake-hub.h"
#include "get-model-dialog.h"

namespace rc::gui {
namespace {

using rc::test::FakeHub;
using rc::test::HubFile;

Catalog twoModels() {
  Catalog c;
  CatalogModel a;
  a.id = QStringLiteral("tiny");
  a.name = QStringLiteral("Tiny Chat");
  a.family = QStringLiteral("Qwen3");
  a.params = QStringLiteral("0.1B");
  a.repo = QStringLiteral("org/model-GGUF");
  a.file = QStringLiteral("model-Q4_K_M.gguf");
  a.quant = QStringLiteral("Q4_K_M");
  a.sizeGb = 0.01;
  a.ramGb = 0.5;
  a.verified = QStringLiteral("test");
  CatalogModel b = a;
  b.id = QStringLiteral("other");
  b.name = QStringLiteral("Other Chat");
  b.file = QStringLiteral("other-Q8_0.gguf");
  b.quant = QStringLiteral("Q8_0");
  b.ramGb = 1e6 / 1e3;  // more than any test machine: shown as too big, still listed
  c.models = {a, b};
  return c;
}

TEST(GetModelDialog, DownloadButtonFetchesVerifiesAndOffersTheModel) {
  QTemporaryDir tmp;
  HubFile f;
  f.bytes = rc::test::randomBytes(700'000, 21);
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  GetModelDialog dlg(twoModels(), tmp.filePath(QStringLiteral("models")), hub.endpoint());
  dlg.show();
  auto* table = dlg.findChild<QTreeWidget*>(QStringLiteral("catalogTable"));
  auto* go = dlg.findChild<QPushButton*>(QStringLiteral("downloadButton"));
  ASSERT_TRUE(table && go);
  ASSERT_EQ(table->topLevelItemCount(), 2);
  EXPECT_EQ(table->topLevelItem(0)->text(1), QStringLiteral("Q4_K_M"));
  EXPECT_EQ(table->topLevelItem(0)->text(4), QStringLiteral("org/model-GGUF"));
  ASSERT_TRUE(dlg.selectModel(QStringLiteral("tiny")));
  EXPECT_EQ(go->text(), QStringLiteral("Download"));

  QSignalSpy ready(&dlg, &GetModelDialog::modelReady);
  QTest::mouseClick(go, Qt::LeftButton);
  ASSERT_TRUE(QTest::qWaitFor([&] { return ready.count() > 0; }, 30000))
      << dlg.statusText().toStdString();
  const QString path = ready.at(0).at(0).toString();
  EXPECT_EQ(path, tmp.filePath(QStringLiteral("models/model-Q4_K_M.gguf")));
  QFile got(path);
  ASSERT_TRUE(got.open(QIODevice::ReadOnly));
  EXPECT_EQ(got.readAll(), f.bytes);
  EXPECT_TRUE(dlg.statusText().contains(QStringLiteral("verified")))
      << dlg.statusText().toStdString();
  EXPECT_FALSE(dlg.isVisible());  // the window loads the model now

  // Opened again: the row says it is there and the button uses it at once.
  dlg.show();
  ASSERT_TRUE(dlg.selectModel(QStringLiteral("tiny")));
  EXPECT_TRUE(table->currentItem()->text(0).contains(QStringLiteral("downloaded")));
  EXPECT_EQ(go->text(), QStringLiteral("Use this model"));
  go->click();
  ASSERT_EQ(ready.count(), 2);
  EXPECT_EQ(ready.at(1).at(0).toString(), path);
  EXPECT_EQ(hub.rangesFor(QStringLiteral("/cdn/")).size(), 1);  // not fetched twice
}

TEST(GetModelDialog, OfflineShowsWhyInTheStatusLine) {
  QTemporaryDir tmp;
  const QString endpoint = QStringLiteral("http://127.0.0.1:%1").arg(rc::test::closedPort());
  GetModelDialog dlg(twoModels(), tmp.filePath(QStringLiteral("models")), endpoint);
  dlg.show();
  ASSERT_TRUE(dlg.selectModel(QStringLiteral("other")));
  dlg.startSelected();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return dlg.download()->state() == ModelDownload::State::Failed; }, 30000));
  EXPECT_TRUE(dlg.statusText().contains(QStringLiteral("offline")))
      << dlg.statusText().toStdString();
  auto* go = dlg.findChild<QPushButton*>(QStringLiteral("downloadButton"));
  EXPECT_TRUE(go->isEnabled());  // try again
}

TEST(GetModelDialog, PauseAndResumeButtonsDriveTheDownload) {
  QTemporaryDir tmp;
  HubFile f;
  f.bytes = rc::test::randomBytes(3 << 20, 22);
  f.stallAt = 500'000;
  FakeHub hub({f});
  ASSERT_TRUE(hub.ok()) << hub.error().toStdString();
  GetModelDialog dlg(twoModels(), tmp.filePath(QStringLiteral("models")), hub.endpoint());
  dlg.show();
  ASSERT_TRUE(dlg.selectModel(QStringLiteral("tiny")));
  QSignalSpy ready(&dlg, &GetModelDialog::modelReady);
  dlg.startSelected();
  auto* pause = dlg.findChild<QPushButton*>(QStringLiteral("pauseButton"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return dlg.download()->received() == 500'000; }, 30000));
  ASSERT_TRUE(pause->isVisible());
  EXPECT_EQ(pause->text(), QStringLiteral("Pause"));
  pause->click();
  EXPECT_EQ(dlg.download()->state(), ModelDownload::State::Paused);
  EXPECT_EQ(pause->text(), QStringLiteral("Resume"));
  EXPECT_TRUE(dlg.statusText().contains(QStringLiteral("Paused")))
      << dlg.statusText().toStdString();
  const qint64 kept = dlg.download()->received();
  pause->click();
  ASSERT_TRUE(QTest::qWaitFor([&] { return ready.count() > 0; }, 30000))
      << dlg.statusText().toStdString();
  const QStringList cdn = hub.rangesFor(QStringLiteral("/cdn/"));
  ASSERT_EQ(cdn.size(), 2);
  EXPECT_EQ(cdn[1], QStringLiteral("bytes=%1-").arg(kept));
}

}  // namespace
}  // namespace rc::gui
