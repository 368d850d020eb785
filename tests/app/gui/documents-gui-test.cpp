// Documents in the desktop app (docs/architecture.md section 21), in the
// real window under xvfb-run with the test model: a file attached with the
// paperclip's file dialog and one dropped on the chat become chips that
// turn "ready", the library (beside the history) and the conversation keep
// them, the prompt the engine caches holds their text in the system
// message, and the reply's footer counts their tokens; bad files get one
// message and change nothing; removing a document in the Documents pane
// purges its KV from the tree. Saves a screenshot next to the test binary.
#include <gtest/gtest.h>
#include <QApplication>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUrl>

#include "app-style.h"
#include "chat-test-util.h"
#include "chat/chat-view.h"
#include "chat/composer.h"
#include "chat/document-chips.h"
#include "chat/engine-host.h"
#include "chat/message-widget.h"
#include "document-controller.h"
#include "documents-dialog.h"
#include "library/library.h"
#include "main-window.h"
#include "require-test-model.h"

using namespace rc::gui;
using rc::test::waitUntil;

namespace {

constexpr const char* kNotes =
    "Meeting notes. The zebra named Quillon guards the lighthouse on Tuesdays.\n";
constexpr const char* kPaper =
    "A short paper. Copper kettles boil faster on the northern plateau of Vressel.\n";

class DocumentsGuiTest : public testing::Test {
 protected:
  void SetUp() override {
    RC_REQUIRE_TEST_MODEL();
    ASSERT_TRUE(dir_.isValid());
    qputenv("HOME", dir_.path().toLocal8Bit());  // the file dialog starts here
    auto store = rc::store::StoreThread::open(dir_.filePath("chat.db").toStdString());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store.value());
    rc::gui::applyAppStyle(*qApp);
    launch();
  }
  // A launch of the window on this history, library and disk cache.
  void launch() {
    WindowOptions options;
    options.settingsFile = dir_.filePath("settings.ini");
    window_ = std::make_unique<MainWindow>(store_.get(), options);
    window_->show();
    window_->activateWindow();
    EXPECT_TRUE(QTest::qWaitForWindowActive(window_.get()));
    QSignalSpy ready(window_.get(), &MainWindow::readyForInput);
    window_->start();
    ASSERT_TRUE(waitUntil([&] { return ready.count() > 0; }, 120000));
    ChatSampling s;
    s.temperature = 0;
    s.maxTokens = 24;
    window_->controller()->setSampling(s);
    ASSERT_TRUE(window_->documents()->isOpen());
  }
  void TearDown() override {
    window_.reset();
    store_.reset();
  }

  QString writeFile(const QString& name, const QByteArray& bytes) {
    const QString path = dir_.filePath(name);
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(bytes);
    return path;
  }

  // The paperclip, then the file dialog answered as a user would.
  void attachByButton(const QString& path) {
    QTest::mouseClick(window_->attachButton(), Qt::LeftButton);
    QFileDialog* dialog = nullptr;
    ASSERT_TRUE(waitUntil(
        [&] {
          dialog = window_->findChild<QFileDialog*>(QStringLiteral("attachDialog"));
          return dialog && dialog->isVisible();
        },
        5000));
    EXPECT_EQ(QDir(dialog->directory()).absolutePath(), QDir(dir_.path()).absolutePath())
        << "the dialog starts in the home folder";
    dialog->selectFile(path);
    static_cast<QDialog*>(dialog)->accept();  // QFileDialog's is protected; the Open button
  }

  void drop(const QStringList& paths) {
    auto* mime = new QMimeData;
    QList<QUrl> urls;
    for (const QString& p : paths) urls << QUrl::fromLocalFile(p);
    mime->setUrls(urls);
    rc::ui::ChatView* view = window_->chatView();
    const QPointF at(view->width() / 2.0, view->height() / 2.0);
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view, &enter);
    EXPECT_TRUE(enter.isAccepted()) << "the chat takes dragged files";
    QDropEvent dropped(at, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view, &dropped);
    EXPECT_TRUE(dropped.isAccepted());
    delete mime;
  }

  std::vector<rc::ui::DocumentChip> chips() const { return window_->documentChips()->chips(); }
  bool allReady(size_t n) const {
    const auto c = chips();
    if (c.size() != n) return false;
    for (const auto& chip : c)
      if (chip.state != DocumentController::tr("ready")) return false;
    return true;
  }

  void send(const QString& text) {
    QSignalSpy stored(window_->controller(), &ChatController::replyStored);
    rc::ui::ComposerEdit* edit = window_->composer()->edit();
    edit->setFocus();
    QTest::keyClicks(edit, text);
    QTest::keyClick(edit, Qt::Key_Return);
    ASSERT_TRUE(waitUntil([&] { return stored.count() > 0; }, 120000));
  }

  // Every root-to-leaf path of the engine's tree, as text.
  std::vector<std::string> cachedTexts() {
    rc::Engine* e = window_->engineHost()->engine();
    const rc::CacheSnapshot snap = e->cache_snapshot();
    std::map<rc::NodeId, const rc::CacheNodeInfo*> byId;
    std::set<rc::NodeId> parents;
    for (const auto& n : snap.nodes) {
      byId[n.id] = &n;
      parents.insert(n.parent);
    }
    std::vector<std::string> out;
    for (const auto& n : snap.nodes) {
      if (parents.count(n.id) || n.id == rc::kRootNode) continue;
      std::vector<int32_t> tokens;
      for (const rc::CacheNodeInfo* at = &n; at && at->id != rc::kRootNode;
           at = byId.count(at->parent) ? byId[at->parent] : nullptr)
        tokens.insert(tokens.begin(), at->tokens.begin(), at->tokens.end());
      out.push_back(e->detokenize(tokens));
    }
    return out;
  }

  std::vector<std::string> libraryNames() {
    auto lib = rc::library::Library::open(window_->documents()->libraryPath());
    EXPECT_TRUE(lib.ok()) << lib.status().message();
    std::vector<std::string> names;
    if (!lib.ok()) return names;
    auto list = lib.value()->list();
    EXPECT_TRUE(list.ok());
    if (list.ok())
      for (const auto& d : list.value()) names.push_back(d.name);
    return names;
  }

  QTemporaryDir dir_;
  std::unique_ptr<rc::store::StoreThread> store_;
  std::unique_ptr<MainWindow> window_;
};

TEST_F(DocumentsGuiTest, AttachByButtonAndDropThenAsk) {
  const QString notes = writeFile("notes.md", kNotes);
  const QString paper = writeFile("paper.txt", kPaper);
  EXPECT_EQ(window_->documents()->libraryPath(),
            std::filesystem::path(dir_.filePath("library.db").toStdString()))
      << "the library sits beside the history";

  attachByButton(notes);
  ASSERT_EQ(chips().size(), 1u);
  EXPECT_EQ(chips()[0].state, DocumentController::tr("computing…"))
      << "the chip shows the work until the prefix is warm";
  ASSERT_TRUE(waitUntil([&] { return allReady(1); }, 60000));
  EXPECT_EQ(chips()[0].name, QStringLiteral("notes.md"));
  drop({paper});
  ASSERT_TRUE(waitUntil([&] { return allReady(2); }, 60000));
  EXPECT_EQ(chips()[1].name, QStringLiteral("paper.txt"));
  // The same file again is the same document: still two chips.
  drop({notes});
  ASSERT_TRUE(waitUntil([&] { return allReady(2); }, 60000));
  EXPECT_EQ(libraryNames(), (std::vector<std::string>{"notes.md", "paper.txt"}));

  QSignalSpy finished(window_->controller(), &ChatController::replyFinished);
  send(QStringLiteral("Who guards the lighthouse?"));
  ASSERT_EQ(finished.count(), 1);
  const auto metrics = finished.at(0).at(1).value<rc::ui::ReplyMetrics>();
  EXPECT_GT(metrics.documentTokens, 20);
  EXPECT_GT(metrics.cachedDocumentTokens, 0) << "the attached documents were warmed";
  EXPECT_LE(metrics.cachedDocumentTokens, metrics.documentTokens);

  // The prompt the engine cached: the documents in library order in the
  // system message, before the question.
  bool found = false;
  for (const std::string& text : cachedTexts()) {
    const size_t a = text.find("Quillon guards the lighthouse");
    const size_t b = text.find("northern plateau of Vressel");
    const size_t q = text.find("Who guards the lighthouse?");
    if (a != std::string::npos && b != std::string::npos && q != std::string::npos) {
      EXPECT_LT(a, b);
      EXPECT_LT(b, q);
      EXPECT_NE(text.rfind("### Document: notes.md", a), std::string::npos);
      found = true;
    }
  }
  EXPECT_TRUE(found) << "no cached prompt holds both documents and the question";

  // The footer under the reply says it.
  QString footer;
  for (QLabel* l : window_->chatView()->findChildren<QLabel*>(QStringLiteral("metricsLabel"))) {
    if (l->text().contains(QStringLiteral("document tokens"))) footer = l->text();
  }
  EXPECT_TRUE(
      footer.contains(QStringLiteral("%1 document tokens, %2 cached")
                          .arg(QLocale(QLocale::English).toString(metrics.documentTokens),
                               QLocale(QLocale::English).toString(metrics.cachedDocumentTokens))))
      << footer.toStdString();

  // The conversation keeps its documents in the history.
  const qint64 conv = window_->controller()->currentConversation();
  ASSERT_GT(conv, 0);
  auto kept =
      store_->submit([conv](rc::store::Store& s) { return s.conversation_documents(conv); }).get();
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept.value(), (std::vector<std::string>{"notes.md", "paper.txt"}));

  window_->controller()->waitForStore();
  QTest::qWait(300);
  const QString shot = QStringLiteral(RADIXCHAT_BINARY_DIR "/documents-chat.png");
  ASSERT_TRUE(window_->grab().save(shot));
  std::printf("screenshot: %s\n", qPrintable(shot));

  // A new chat has no chips; back to this one, its documents come back.
  window_->controller()->newConversation();
  ASSERT_TRUE(waitUntil([&] { return chips().empty(); }, 5000));
  window_->controller()->selectConversation(conv);
  ASSERT_TRUE(waitUntil([&] { return chips().size() == 2; }, 5000));
  // The chip's × detaches it from this conversation only.
  auto* remove =
      window_->documentChips()->findChild<QToolButton*>(QStringLiteral("documentChipRemove"));
  ASSERT_NE(remove, nullptr);
  QTest::mouseClick(remove, Qt::LeftButton);
  ASSERT_TRUE(waitUntil([&] { return chips().size() == 1; }, 5000));
  window_->controller()->waitForStore();
  EXPECT_EQ(libraryNames().size(), 2u);
}

TEST_F(DocumentsGuiTest, BadFilesGetOneMessageAndChangeNothing) {
  const QString good = writeFile("good.txt", kNotes);
  attachByButton(good);
  ASSERT_TRUE(waitUntil([&] { return allReady(1); }, 60000));
  const QString empty = writeFile("empty.txt", "");
  const QString binary = writeFile("blob.bin", QByteArray::fromHex("7f454c46000001020000"));
  const QString latin1 = writeFile("latin1.txt", QByteArray("caf\xe9 cr\xe8me\n"));
  const QString pdf = writeFile("broken.pdf", QByteArray("%PDF-1.4\n1 0 obj\n<<"));
  const QString huge = writeFile("huge.txt", "a");
  ASSERT_TRUE(QFile::resize(huge, (qint64(50) << 20) + 1));  // sparse: nothing is written
  QSignalSpy errors(window_->documents(), &DocumentController::errorOccurred);
  drop({empty, binary, latin1, pdf, huge});
  ASSERT_TRUE(waitUntil([&] { return errors.count() == 5; }, 30000));
  QStringList messages;
  for (const auto& e : errors) messages << e.at(0).toString();
  for (const QString& name :
       {QStringLiteral("empty.txt"), QStringLiteral("blob.bin"), QStringLiteral("latin1.txt"),
        QStringLiteral("broken.pdf"), QStringLiteral("huge.txt")}) {
    EXPECT_EQ(messages.filter(name).size(), 1) << messages.join('\n').toStdString();
  }
  for (const QString& m : messages) EXPECT_FALSE(m.contains('\n')) << m.toStdString();
  EXPECT_TRUE(allReady(1)) << "the good document stays attached";
  EXPECT_EQ(libraryNames(), std::vector<std::string>{"good.txt"});
}

TEST_F(DocumentsGuiTest, RemovingFromThePanePurgesItsKv) {
  const QString notes = writeFile("notes.md", kNotes);
  attachByButton(notes);
  ASSERT_TRUE(waitUntil([&] { return allReady(1); }, 60000));
  send(QStringLiteral("Who guards the lighthouse?"));
  auto holdsNotes = [&] {
    for (const std::string& t : cachedTexts())
      if (t.find("Quillon guards the lighthouse") != std::string::npos) return true;
    return false;
  };
  ASSERT_TRUE(holdsNotes());

  DocumentsDialog* pane = window_->openDocuments();
  QTableWidget* table = pane->table();
  ASSERT_TRUE(waitUntil([&] { return table->rowCount() == 1; }, 10000));
  EXPECT_EQ(pane->nameAt(0), QStringLiteral("notes.md"));
  ASSERT_TRUE(waitUntil(
      [&] { return table->item(0, DocumentsDialog::kState)->text() == "in memory"; }, 10000))
      << table->item(0, DocumentsDialog::kState)->text().toStdString();
  EXPECT_TRUE(
      table->item(0, DocumentsDialog::kUsedBy)->text().contains(QStringLiteral("Who guards")))
      << "the conversation that uses it";
  const QString shot = QStringLiteral(RADIXCHAT_BINARY_DIR "/documents-pane.png");
  ASSERT_TRUE(pane->grab().save(shot));
  std::printf("screenshot: %s\n", qPrintable(shot));
  // Search finds it by its text, and nothing for other words.
  pane->search()->setText(QStringLiteral("zebra"));
  ASSERT_TRUE(waitUntil([&] { return table->rowCount() == 1; }, 5000));
  pane->search()->setText(QStringLiteral("submarine"));
  ASSERT_TRUE(waitUntil([&] { return table->rowCount() == 0; }, 5000));
  pane->search()->clear();
  ASSERT_TRUE(waitUntil([&] { return table->rowCount() == 1; }, 5000));

  QSignalSpy removed(window_->documents(), &DocumentController::removed);
  table->selectRow(0);
  auto* button = pane->findChild<QPushButton*>(QStringLiteral("documentRemove"));
  ASSERT_NE(button, nullptr);
  ASSERT_TRUE(button->isEnabled());
  QTest::mouseClick(button, Qt::LeftButton);
  ASSERT_TRUE(waitUntil([&] { return removed.count() == 1; }, 30000));
  EXPECT_EQ(removed.at(0).at(0).toString(), QStringLiteral("notes.md"));
  EXPECT_GT(removed.at(0).at(1).toLongLong(), 0) << "tokens dropped from the tree";
  EXPECT_TRUE(removed.at(0).at(3).toString().isEmpty());
  EXPECT_FALSE(holdsNotes()) << "the document's KV is still in the tree";
  EXPECT_TRUE(libraryNames().empty());
  EXPECT_TRUE(chips().empty());
  ASSERT_TRUE(waitUntil([&] { return table->rowCount() == 0; }, 5000));
  EXPECT_TRUE(pane->status()->text().contains(QStringLiteral("Removed notes.md")));
}

// Deleting a conversation that answered from a document purges its turns:
// its prompts are rendered with the document placed, as they were sent, so
// the purge finds what the cache holds.
TEST_F(DocumentsGuiTest, DeletingAConversationWithADocumentPurgesItsTurns) {
  const QString notes = writeFile("notes.md", kNotes);
  attachByButton(notes);
  ASSERT_TRUE(waitUntil([&] { return allReady(1); }, 60000));
  send(QStringLiteral("Who guards the lighthouse?"));
  auto holds = [&](const char* text) {
    for (const std::string& t : cachedTexts())
      if (t.find(text) != std::string::npos) return true;
    return false;
  };
  ASSERT_TRUE(holds("Who guards the lighthouse?"));
  const qint64 id = window_->controller()->currentConversation();
  ASSERT_GT(id, 0);

  QSignalSpy forgotten(window_->engineHost(), &rc::ui::EngineHost::forgotten);
  window_->controller()->deleteConversation(id);
  ASSERT_TRUE(waitUntil([&] { return forgotten.count() == 1; }, 30000));
  EXPECT_GT(forgotten.at(0).at(0).toLongLong(), 0) << "tokens dropped from the tree";
  EXPECT_FALSE(holds("Who guards the lighthouse?")) << "the deleted question is still cached";
  EXPECT_EQ(libraryNames(), std::vector<std::string>{"notes.md"}) << "the document stays";
}

// Keep warm in the Documents pane: ticking it marks the document in the
// library and pins its prefix in the engine; after a restart it is pinned
// again at start ("in memory") while a document only asked about last time
// is "on disk" (the pool starts empty, the disk tier kept its blocks);
// unticking releases the pin; removing a pinned document still purges it.
TEST_F(DocumentsGuiTest, KeepWarmPinsAcrossARestartAndStatesTellMemoryFromDisk) {
  QByteArray longPaper;
  for (int i = 0; i < 12; ++i)
    longPaper += "Copper kettles boil faster on the northern plateau of Vressel, section " +
                 QByteArray::number(i) + ", where the wind is dry.\n";
  const QString notes = writeFile("notes.md", kNotes);
  const QString paper = writeFile("paper.txt", longPaper);
  attachByButton(notes);
  ASSERT_TRUE(waitUntil([&] { return allReady(1); }, 60000));
  send(QStringLiteral("Who guards the lighthouse?"));
  // The paper alone in another chat: its prefix goes to the disk tier.
  window_->controller()->newConversation();
  ASSERT_TRUE(waitUntil([&] { return chips().empty(); }, 5000));
  attachByButton(paper);
  ASSERT_TRUE(waitUntil([&] { return allReady(1); }, 60000));
  send(QStringLiteral("Where do kettles boil faster?"));

  auto pinnedPages = [&] { return window_->engineHost()->engine()->stats().cache.pinned_pages; };
  auto keptInLibrary = [&](const char* name) {
    auto lib = rc::library::Library::open(window_->documents()->libraryPath());
    return lib.ok() && lib.value()->get(name).ok() && lib.value()->get(name)->info.pinned;
  };
  ASSERT_EQ(pinnedPages(), 0);
  DocumentsDialog* pane = window_->openDocuments();
  QTableWidget* table = pane->table();
  ASSERT_TRUE(waitUntil([&] { return table->rowCount() == 2; }, 10000));
  ASSERT_EQ(pane->nameAt(0), QStringLiteral("notes.md"));
  ASSERT_EQ(table->item(0, DocumentsDialog::kKeepWarm)->checkState(), Qt::Unchecked);
  QSignalSpy kept(window_->documents(), &DocumentController::keptWarmChanged);
  table->item(0, DocumentsDialog::kKeepWarm)->setCheckState(Qt::Checked);  // the user's tick
  ASSERT_TRUE(waitUntil([&] { return kept.count() == 1; }, 30000));
  EXPECT_EQ(kept.at(0).at(2).toString(), QString());
  EXPECT_GT(pinnedPages(), 0) << "the kept-warm prefix is pinned";
  EXPECT_TRUE(keptInLibrary("notes.md"));
  EXPECT_FALSE(keptInLibrary("paper.txt"));

  window_.reset();  // the engine writes its queued blocks to the disk tier
  launch();
  ASSERT_TRUE(waitUntil([&] { return pinnedPages() > 0; }, 30000))
      << "the kept-warm document is pinned again at start";
  pane = window_->openDocuments();
  table = pane->table();
  auto state = [&](int row) {
    const QTableWidgetItem* item = table->item(row, DocumentsDialog::kState);
    return item ? item->text() : QString();
  };
  ASSERT_TRUE(waitUntil([&] { return table->rowCount() == 2; }, 10000));
  EXPECT_EQ(table->item(0, DocumentsDialog::kKeepWarm)->checkState(), Qt::Checked);
  EXPECT_EQ(table->item(1, DocumentsDialog::kKeepWarm)->checkState(), Qt::Unchecked);
  ASSERT_TRUE(waitUntil(
      [&] {
        pane->refresh();
        QTest::qWait(200);
        return state(0) == QStringLiteral("in memory") && state(1) == QStringLiteral("on disk");
      },
      20000))
      << state(0).toStdString() << " / " << state(1).toStdString();
  const QString shot = QStringLiteral(RADIXCHAT_BINARY_DIR "/documents-keep-warm.png");
  ASSERT_TRUE(pane->grab().save(shot));
  std::printf("screenshot: %s\n", qPrintable(shot));

  // Unticked: the pin goes, the KV stays cached.
  QSignalSpy unkept(window_->documents(), &DocumentController::keptWarmChanged);
  table->item(0, DocumentsDialog::kKeepWarm)->setCheckState(Qt::Unchecked);
  ASSERT_TRUE(waitUntil([&] { return unkept.count() == 1; }, 30000));
  EXPECT_EQ(pinnedPages(), 0);
  EXPECT_FALSE(keptInLibrary("notes.md"));
  // Ticked again and removed: the purge releases the pin and drops it.
  ASSERT_TRUE(waitUntil(
      [&] { return table->item(0, DocumentsDialog::kKeepWarm)->checkState() == Qt::Unchecked; },
      5000));
  table->item(0, DocumentsDialog::kKeepWarm)->setCheckState(Qt::Checked);
  ASSERT_TRUE(waitUntil([&] { return unkept.count() == 2 && pinnedPages() > 0; }, 30000));
  QSignalSpy removed(window_->documents(), &DocumentController::removed);
  window_->documents()->removeFromLibrary(QStringLiteral("notes.md"));
  ASSERT_TRUE(waitUntil([&] { return removed.count() == 1; }, 30000));
  EXPECT_TRUE(removed.at(0).at(3).toString().isEmpty());
  EXPECT_GT(removed.at(0).at(1).toLongLong(), 0) << "tokens dropped from the tree";
  EXPECT_EQ(pinnedPages(), 0);
}

// After a restart the pool is empty, but the disk tier the first session
// wrote still holds the document: removing it finds and erases those
// blocks (Engine::forget_document sweeps the tiers by the document's text).
TEST_F(DocumentsGuiTest, RemovingAfterARestartPurgesTheDiskTier) {
  const QString notes = writeFile("notes.md", kNotes);
  window_->controller()->setSystemPrompt(QStringLiteral("Answer in one line."), std::nullopt);
  attachByButton(notes);
  ASSERT_TRUE(waitUntil([&] { return allReady(1); }, 60000));
  send(QStringLiteral("Who guards the lighthouse?"));
  window_.reset();  // the engine writes its queued blocks to the disk tier
  launch();
  ASSERT_EQ(window_->controller()->currentConversation(), 0) << "a fresh chat on screen";

  QSignalSpy removed(window_->documents(), &DocumentController::removed);
  window_->documents()->removeFromLibrary(QStringLiteral("notes.md"));
  ASSERT_TRUE(waitUntil([&] { return removed.count() == 1; }, 30000));
  EXPECT_TRUE(removed.at(0).at(3).toString().isEmpty())
      << removed.at(0).at(3).toString().toStdString();
  EXPECT_GT(removed.at(0).at(2).toLongLong(), 0) << "blocks erased from the disk tier";
  EXPECT_TRUE(libraryNames().empty());
}

}  // namespace
