// panel-bench: frame time of the cache panel on a 10,000-node tree, in a
// real window (run it under Xvfb with Mesa, as below). A program that
// prints figures, not a test.
//
//   xvfb-run -a -s '-screen 0 1280x800x24' build/tests/bench/panel-bench [--nodes N] [--frames N]
//   [--size WxH]
//
// Each scenario renders frames back to back: update() and wait (the
// ImGui frame: drain events, apply, layout when needed, build the UI, render
// with the OpenGL3 backend, compose into the window) plus glFinish, timed on
// the wall clock. "ui" is the CPU time of building the ImGui frame alone.
// The swap interval is 0: a frame is timed by its work, not by waiting for a
// (fake) vertical blank. The "baseline" line is a bare QOpenGLWidget that
// only clears: the fixed cost of Qt's composition with Mesa on this machine.
#include <QApplication>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QOpenGLWidget>
#include <QSurfaceFormat>
#include <QTest>
#include <QVBoxLayout>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <numeric>
#include <string>
#include <vector>

#include "panel/cache-feed.h"
#include "panel/cache-panel-gl.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "ui/panel/panel-workload.h"

namespace {

struct Figures {
  double mean = 0, p50 = 0, p99 = 0, max = 0, ui_mean = 0, cpu_mean = 0;
  int drawn = 0, laid_out = 0;
};

class BareGl : public QOpenGLWidget {
 public:
  int paints = 0;

 protected:
  void paintGL() override {
    ++paints;
    context()->functions()->glClearColor(0.1f, 0.1f, 0.1f, 1);
    context()->functions()->glClear(GL_COLOR_BUFFER_BIT);
  }
};

// CPU time of the whole process (the GUI thread and llvmpipe's rasterizer
// threads), in ms: what a frame costs even when the machine is shared.
double process_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

// One frame through Qt's own path (update() -> UpdateRequest -> paintGL ->
// composition), waiting until it was painted: repaint() alone is sometimes
// skipped for a QOpenGLWidget.
template <typename Widget, typename Count>
bool paint_one(Widget* w, Count painted) {
  const auto before = painted();
  w->update();
  const auto t0 = std::chrono::steady_clock::now();
  while (painted() == before) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) return false;
  }
  return true;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  size_t nodes = 10000;
  int frames = 200;
  int width = 1280, height = 800;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) {
      nodes = size_t(std::stoul(argv[++i]));
    } else if (!std::strcmp(argv[i], "--frames") && i + 1 < argc) {
      frames = std::stoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--size") && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%dx%d", &width, &height) != 2) return 2;
    } else {
      std::fprintf(stderr, "usage: panel-bench [--nodes N] [--frames N] [--size WxH]\n");
      return 2;
    }
  }
  // Mesa throttles swaps to a fake vblank under Xvfb unless told not to.
  if (qEnvironmentVariableIsEmpty("vblank_mode")) qputenv("vblank_mode", "0");
  QSurfaceFormat format = QSurfaceFormat::defaultFormat();
  format.setSwapInterval(0);
  QSurfaceFormat::setDefaultFormat(format);
  QApplication app(argc, argv);
  rc::ui::CachePanel panel;
  if (!panel.hasGl()) {
    std::fprintf(stderr, "panel-bench: no OpenGL here (%s); run it under xvfb-run\n",
                 panel.unavailableReason().toStdString().c_str());
    return 1;
  }

  auto cache = rc::test::make_panel_cache(1, int64_t(nodes) * 64);
  const auto t_grow = std::chrono::steady_clock::now();
  rc::test::grow_tree(*cache, nodes, 42);
  const double grow_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_grow).count();
  rc::ui::CachePanelState& st = *panel.state();
  st.set_feed(rc::ui::panel::make_kv_cache_feed(*cache), 0);

  // The baseline first, alone on screen (an obscured window is not repainted).
  {
    QWidget top;
    auto* box = new QVBoxLayout(&top);
    box->setContentsMargins(0, 0, 0, 0);
    auto* bare = new BareGl;
    box->addWidget(bare);
    top.resize(width, height);
    top.show();
    if (!QTest::qWaitForWindowExposed(&top)) return 1;
    std::vector<double> ms, cpu;
    for (int f = 0; f < frames + 10; ++f) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_ms();
      if (!paint_one(bare, [&] { return bare->paints; })) return 1;
      bare->makeCurrent();
      bare->context()->functions()->glFinish();
      bare->doneCurrent();
      if (f < 10) continue;
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      cpu.push_back(process_cpu_ms() - c0);
    }
    std::printf("%-44s mean %6.2f ms  p50 %6.2f  p99 %6.2f  (cpu %5.2f ms, %d paints)\n",
                "baseline: bare QOpenGLWidget, clear only",
                std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size()), percentile(ms, 0.5),
                percentile(ms, 0.99),
                std::accumulate(cpu.begin(), cpu.end(), 0.0) / double(cpu.size()), bare->paints);
  }
  panel.resize(width, height);
  panel.show();
  if (!QTest::qWaitForWindowExposed(&panel)) {
    std::fprintf(stderr, "panel-bench: the window was never exposed\n");
    return 1;
  }
  rc::ui::CachePanelGl* gl = panel.glWidget();
  gl->setFrameInterval(0);  // frames only when we ask
  paint_one(gl, [&] { return gl->frames(); });
  gl->makeCurrent();
  const char* renderer =
      reinterpret_cast<const char*>(gl->context()->functions()->glGetString(GL_RENDERER));
  std::printf(
      "panel-bench: %zu-node tree (%lld tokens) grown in %.2f s; %dx%d window; GL renderer: %s\n",
      size_t(cache->node_count()), (long long)cache->stats().cached_tokens, grow_s, gl->width(),
      gl->height(), renderer ? renderer : "?");
  gl->doneCurrent();

  {  // The layout alone (recomputed when the tree's shape changes).
    auto time_layout = [&](bool lod) {
      rc::ui::panel::LodOptions o = st.tree.lod;
      o.enabled = lod;
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_ms();
      size_t boxes = 0;
      for (int i = 0; i < 20; ++i)
        boxes = rc::ui::panel::layout_tree(st.tree.model, o, st.tree.metrics).nodes.size();
      std::printf(
          "layout of the %zu-node tree, fold cold %-3s  %6.2f ms wall  %6.2f ms cpu  (%zu boxes)\n",
          st.tree.model.size(), lod ? "on" : "off",
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
              20,
          (process_cpu_ms() - c0) / 20, boxes);
    };
    time_layout(true);
    time_layout(false);
  }
  std::printf("frames: %d per scenario; target < 16 ms\n", frames);
  rc::test::PanelWorkload live(*cache, 7, 6);
  auto run = [&](const char* name, bool lod, float zoom, int live_requests) {
    st.tree.lod.enabled = lod;
    st.tree.lod_changed();
    st.tree.view.animate = false;
    st.tree.view.smooth_camera = false;
    st.tree.view.follow = false;
    st.tree.view.request_fit();
    paint_one(gl, [&] { return gl->frames(); });
    if (zoom > 0) {  // a readable zoom, centred on the middle of the tree
      const rc::ui::panel::TreeLayout& L = st.tree.layout(1e9);
      st.tree.view.cam =
          rc::ui::panel::Camera{L.width * 0.5f - float(width) * 0.5f / zoom,
                                L.height * 0.5f - float(height) * 0.25f / zoom, zoom};
    }
    for (int i = 0; i < 10; ++i) paint_one(gl, [&] { return gl->frames(); });  // warm up
    const quint64 painted0 = gl->frames();
    std::vector<double> ms, ui, cpu;
    for (int f = 0; f < frames; ++f) {
      for (int r = 0; r < live_requests; ++r) live.request(false);
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_ms();
      paint_one(gl, [&] { return gl->frames(); });
      gl->makeCurrent();
      gl->context()->functions()->glFinish();
      gl->doneCurrent();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      cpu.push_back(process_cpu_ms() - c0);
      ui.push_back(st.frame.last_draw_ms);
    }
    if (gl->frames() - painted0 != quint64(frames))
      std::printf("warning: %llu of %d frames painted\n",
                  (unsigned long long)(gl->frames() - painted0), frames);
    Figures fg;
    fg.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size());
    fg.p50 = percentile(ms, 0.5);
    fg.p99 = percentile(ms, 0.99);
    fg.max = *std::max_element(ms.begin(), ms.end());
    fg.ui_mean = std::accumulate(ui.begin(), ui.end(), 0.0) / double(ui.size());
    fg.cpu_mean = std::accumulate(cpu.begin(), cpu.end(), 0.0) / double(cpu.size());
    fg.drawn = st.tree.view.stats().nodes_drawn;
    fg.laid_out = int(st.tree.layout(1e9).nodes.size());
    std::printf(
        "%-44s mean %6.2f ms  p50 %6.2f  p99 %6.2f  (cpu %5.2f ms, ui %5.2f ms)  boxes %5d drawn / "
        "%5d laid out\n",
        name, fg.mean, fg.p50, fg.p99, fg.cpu_mean, fg.ui_mean, fg.drawn, fg.laid_out);
    std::fflush(stdout);
  };
  run("fold cold on, whole tree fitted", true, 0, 0);
  run("fold cold on, 100% zoom", true, 1.0f, 0);
  run("fold cold off (all boxes), whole tree fitted", false, 0, 0);
  run("fold cold off (all boxes), 100% zoom", false, 1.0f, 0);
  run("live: 4 requests per frame, fold cold on", true, 0, 4);
  run("live: 4 requests per frame, fold cold off", false, 0, 4);
  std::printf("tree after live scenarios: %lld nodes\n", (long long)cache->node_count());
  return 0;
}
