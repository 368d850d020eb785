// A recording opened in the cache panel, under xvfb-run: the
// built radixchat-cli records a bench run on the bundled model (bench
// --record); the panel opens it through the app's opener and is scrubbed
// to an early moment, a late one and the early one again, with a
// screenshot at each (saved under the build dir). At every moment the
// panel's tree must hold the recording's tree there (node count and ids,
// from the recording reader), and the early and late screenshots must
// differ inside the tree canvas.
#include <gtest/gtest.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QImage>
#include <QProcess>
#include <QTest>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <QSignalSpy>
#include <QTemporaryDir>

#include "app-style.h"
#include "chat/composer.h"
#include "chat/engine-host.h"
#include "main-window.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "radixchat/engine.h"
#include "recording-source.h"
#include "recording/recording-reader.h"
#include "skip-or-fail.h"
#include "store/store-thread.h"
#include "test-paths.h"

namespace rc::ui {
namespace {

namespace fs = std::filesystem;

using rc::test::test_model_path;
std::string out_dir() { return RADIXCHAT_BINARY_DIR "/tests/ui/panel"; }

bool wait_for(const std::function<bool()>& done, int timeout_ms) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > timeout_ms) return false;
    QTest::qWait(50);
  }
  return true;
}

// Share of sampled pixels inside `r` that differ between two grabs.
double differing(const QImage& a, const QImage& b, const QRect& r) {
  int n = 0, diff = 0;
  for (int y = r.top(); y <= r.bottom(); y += 2)
    for (int x = r.left(); x <= r.right(); x += 2) {
      ++n;
      diff += a.pixel(x, y) != b.pixel(x, y);
    }
  return n ? double(diff) / n : 0;
}

class RecordingPanelGui : public ::testing::Test {
 protected:
  void SetUp() override {
    if (QGuiApplication::platformName() == "offscreen")
      RC_SKIP_OR_FAIL("no display (run under xvfb-run)");
    if (!fs::exists(test_model_path())) RC_SKIP_OR_FAIL("the bundled model is missing");
    fs::create_directories(out_dir());
    path_ = out_dir() + "/recording-panel-gui.rcrec";
    fs::remove(path_);
    QProcess cli;
    cli.start(RADIXCHAT_CLI,
              {"bench", "--model", QString::fromStdString(test_model_path()), "--workload",
               "shared-system", "--planted-span", "system", "--cache", "radix", "--requests", "12",
               "--record", QString::fromStdString(path_)});
    ASSERT_TRUE(cli.waitForFinished(240000)) << "bench --record did not finish";
    ASSERT_EQ(cli.exitCode(), 0) << cli.readAllStandardError().toStdString();
    auto rec = recording::Recording::open(path_);
    ASSERT_TRUE(rec.ok()) << rec.status().message();
    rec_ = std::move(rec.value());
  }

  // The recording's own tree at `seq` (the reader, not the panel's source).
  CacheSnapshot tree_at(uint64_t seq) {
    auto t = rec_->tree_at(seq);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? t.value() : CacheSnapshot{};
  }

  // Scrubs the panel to `seq`, waits for the tree and its layout to settle,
  // checks the nodes and grabs the window.
  QImage scrub_and_grab(CachePanel* panel, QWidget& window, uint64_t seq, const char* name) {
    panel->seekRecording(seq);
    const CacheSnapshot want = tree_at(seq);
    CachePanelState& st = *panel->state();
    EXPECT_TRUE(wait_for(
        [&] {
          return panel->recordingApplied() == seq && st.tree.model.size() == want.nodes.size();
        },
        10000))
        << name << ": the panel holds " << st.tree.model.size() << " nodes, the recording "
        << want.nodes.size() << " at event " << seq;
    for (const CacheNodeInfo& n : want.nodes)
      EXPECT_NE(st.tree.model.find(n.id), nullptr) << name << ": node " << n.id << " missing";
    QTest::qWait(1500);  // frames: layout, fit, camera, highlights fade in
    EXPECT_GE(st.tree.view.stats().nodes_drawn, std::min<int>(int(want.nodes.size()) - 1, 3))
        << name;
    const QImage shot = window.grab().toImage();
    const std::string file = out_dir() + "/recording-panel-" + name + ".png";
    EXPECT_TRUE(shot.save(QString::fromStdString(file)));
    std::printf("%s: event %llu, %zu nodes -> %s\n", name, (unsigned long long)seq,
                want.nodes.size(), file.c_str());
    return shot;
  }

  std::string path_;
  std::unique_ptr<recording::Recording> rec_;
};

TEST_F(RecordingPanelGui, ScrubsBackAndForthAndTheTreeFollows) {
  QWidget window;
  auto* box = new QHBoxLayout(&window);
  box->setContentsMargins(0, 0, 0, 0);
  auto* panel = new CachePanel(&window);
  box->addWidget(panel);
  window.resize(1100, 790);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  if (!panel->hasGl()) RC_SKIP_OR_FAIL(panel->unavailableReason().toStdString());
  panel->setRecordingOpener(gui::make_recording_opener());
  panel->setTreeExporter(gui::make_tree_exporter());

  EXPECT_NE(panel->openRecording("/nonexistent/recording.rcrec"), "");
  EXPECT_FALSE(panel->recordingShown());
  ASSERT_EQ(panel->openRecording(QString::fromStdString(path_)).toStdString(), "");
  CachePanelState& st = *panel->state();
  ASSERT_TRUE(wait_for([&] { return st.replay_shown(); }, 5000));
  panel::RecordingSource& src = *st.replay.source();
  const auto& reqs = src.requests();
  ASSERT_GE(reqs.size(), 12u);
  // Early: the tree the second request met (the shared system prompt and
  // one conversation). Late: the end of the run.
  const uint64_t early = reqs[1].seq, late = src.end_seq();
  ASSERT_LT(tree_at(early).nodes.size() + 3, tree_at(late).nodes.size())
      << "the run should grow the tree";

  const QImage a = scrub_and_grab(panel, window, early, "early");
  const QImage b = scrub_and_grab(panel, window, late, "late");
  // Export at the late moment: every node of the recording's tree there.
  const std::string svg = out_dir() + "/recording-panel-late.svg";
  const std::string png = out_dir() + "/recording-panel-late-export.png";
  ASSERT_EQ(panel->exportTree(QString::fromStdString(svg)).toStdString(), "");
  ASSERT_EQ(panel->exportTree(QString::fromStdString(png)).toStdString(), "");
  {
    std::ifstream f(svg);
    const std::string doc((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (const CacheNodeInfo& n : tree_at(late).nodes)
      EXPECT_NE(doc.find("data-id=\"" + std::to_string(n.id) + "\""), std::string::npos)
          << "node " << n.id << " not in the exported SVG";
    EXPECT_NE(doc.find("at event " + std::to_string(late)), std::string::npos);
    const QImage picture(QString::fromStdString(png));
    EXPECT_GT(picture.width(), 100);
  }
  const QImage c = scrub_and_grab(panel, window, early, "early-again");
  // The tree canvas in window pixels (the panel fills the window).
  const QRect canvas = QRectF(QPointF(st.tree.view.canvas_min().x, st.tree.view.canvas_min().y),
                              QPointF(st.tree.view.canvas_max().x, st.tree.view.tree_area_bottom()))
                           .toAlignedRect()
                           .intersected(a.rect())
                           .adjusted(2, 2, -2, -2);
  ASSERT_GT(canvas.width(), 200);
  ASSERT_GT(canvas.height(), 100);
  EXPECT_GT(differing(a, b, canvas), 0.01) << "early and late look the same in the tree";
  EXPECT_GT(differing(c, b, canvas), 0.01) << "back to early still shows the late tree";
  EXPECT_GT(st.source.resyncs, 0u) << "going back rebuilds from a snapshot";

  // Why did a request miss: the planted span differs between prompts, and
  // the shared rest of the system prompt agrees again after it.
  int picked = -1;
  for (size_t i = 0; i < reqs.size() && picked < 0; ++i) {
    st.replay.jump_request(i);
    const panel::MissView& m = st.replay.miss();
    if (m.ok && m.realigned && m.would_reuse > m.matched_tokens) picked = int(i);
  }
  ASSERT_GE(picked, 0) << "no request missed on the planted span";
  st.frame.select_tab = "Request";
  st.frame.bottom_frac = 0.5f;  // room for the explanation
  panel->seekRecording(reqs[size_t(picked)].seq);
  st.replay.jump_request(size_t(picked));
  ASSERT_TRUE(wait_for([&] { return st.frame.current_tab == "Request"; }, 3000));
  QTest::qWait(1500);
  const std::string file = out_dir() + "/recording-panel-request.png";
  EXPECT_TRUE(window.grab().toImage().save(QString::fromStdString(file)));
  std::printf("request %d's miss: %s\n", picked, file.c_str());

  panel->closeRecording();
  EXPECT_TRUE(wait_for([&] { return !st.replay_shown() && st.feed() == nullptr; }, 3000));
}

// Record... in the app window: two chat turns on the bundled model while
// the panel records, then Stop. The file holds both replies as requests,
// each tied to its match event (so the prompt rebuilt from the chat on
// screen is the one the engine ran), and ends at the engine's tree.
TEST(RecordingPanelApp, RecordsTheChatsRequestsAndTree) {
  if (!fs::exists(test_model_path())) RC_SKIP_OR_FAIL("the bundled model is missing");
  if (QGuiApplication::platformName() == "offscreen")
    RC_SKIP_OR_FAIL("no display (run under xvfb-run)");
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  auto store = rc::store::StoreThread::open(dir.filePath("chat.db").toStdString());
  ASSERT_TRUE(store.ok()) << store.status().message();
  gui::applyAppStyle(*qApp);
  gui::WindowOptions options;
  options.settingsFile = dir.filePath("settings.ini");
  auto window = std::make_unique<gui::MainWindow>(store.value().get(), options);
  window->show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(window.get()));
  QSignalSpy ready(window.get(), &gui::MainWindow::readyForInput);
  window->start();
  ASSERT_TRUE(QTest::qWaitFor([&] { return ready.count() > 0; }, 120000));
  CachePanel* panel = window->cachePanel();
  if (!panel->hasGl()) RC_SKIP_OR_FAIL(panel->unavailableReason().toStdString());
  rc::Engine* engine = window->engineHost()->engine();
  ASSERT_NE(engine, nullptr);
  QTest::qWait(500);  // saved system prompts warm up at start

  const std::string path = dir.filePath("chat.rcrec").toStdString();
  ASSERT_EQ(panel->startRecording(QString::fromStdString(path)).toStdString(), "");
  EXPECT_TRUE(panel->recording());
  QSignalSpy finished(window->controller(), &gui::ChatController::replyFinished);
  rc::ui::ComposerEdit* edit = window->composer()->edit();
  for (const char* text : {"What is a radix tree?", "And why is it fast?"}) {
    const int before = finished.count();
    edit->setFocus();
    QTest::keyClicks(edit, text);
    QTest::keyClick(edit, Qt::Key_Return);
    ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() > before; }, 120000));
    EXPECT_EQ(finished.last().at(2).toString(), QString()) << "the reply failed";
  }
  QTest::qWait(500);  // frames: the panel drains the last events
  EXPECT_NE(panel->recordingStatus().toStdString().find("2 requests"), std::string::npos)
      << panel->recordingStatus().toStdString();
  panel->stopRecording();
  const CacheSnapshot end = engine->cache_snapshot();
  EXPECT_FALSE(panel->recording());
  EXPECT_NE(panel->recordingStatus().toStdString().find("Recorded to"), std::string::npos)
      << panel->recordingStatus().toStdString();

  auto src = gui::make_recording_opener()(path);
  ASSERT_TRUE(src.ok()) << src.status().message();
  ASSERT_EQ((*src)->requests().size(), 2u);
  for (const panel::RecordedRequest& r : (*src)->requests()) {
    EXPECT_TRUE(r.matched) << "request " << r.id << ": its prompt did not meet its match event";
    EXPECT_GT(r.prompt_tokens, 0);
  }
  EXPECT_GT((*src)->requests()[1].matched_tokens, 0) << "the second turn reuses the first";
  auto t = (*src)->tree_at((*src)->end_seq());
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->nodes.size(), end.nodes.size());
  for (size_t i = 0; i < end.nodes.size(); ++i) {
    EXPECT_EQ(t->nodes[i].id, end.nodes[i].id);
    EXPECT_EQ(t->nodes[i].tokens, end.nodes[i].tokens);
  }
  window.reset();
}

}  // namespace
}  // namespace rc::ui
