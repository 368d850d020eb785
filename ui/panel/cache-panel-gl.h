// CachePanelGl: the QOpenGLWidget that hosts Dear ImGui for the cache panel.
//
// Owns one ImGui context (made current around every ImGui call, so several
// panels can coexist) and the ImGui OpenGL3 renderer. initializeGL creates
// both; paintGL runs one frame: input -> NewFrame -> state->sync() (drain the
// engine's cache events) -> state->draw() -> Render -> GL. A 16 ms timer
// asks for a frame while something moves (events arriving, highlights
// fading, the camera gliding, a demo) and four times a second otherwise
// (to drain events and refresh stats); input asks for one at once.
//
// Only constructed when CachePanel found that this platform can create an
// OpenGL 3 (or GLES 3) context; see CachePanel. GUI thread only.
#pragma once

#include <QOpenGLWidget>
#include <QTimer>
#include <functional>

#include "panel/imgui-input.h"

struct ImGuiContext;

namespace rc::ui {

struct CachePanelState;

class CachePanelGl : public QOpenGLWidget {
  Q_OBJECT
 public:
  // `clock` returns seconds on the panel's clock.
  CachePanelGl(CachePanelState* state, std::function<double()> clock, QWidget* parent = nullptr);
  ~CachePanelGl() override;

  // Frames painted so far, and the CPU time of the latest paintGL (ms):
  // UI build plus GL submission.
  quint64 frames() const { return frames_; }
  double lastFrameMs() const { return last_frame_ms_; }
  bool initialized() const { return ctx_ != nullptr; }
  // Frame timer interval in ms (0 stops it: frames only on update()).
  void setFrameInterval(int ms);

 protected:
  void initializeGL() override;
  void paintGL() override;

  void mouseMoveEvent(QMouseEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void keyReleaseEvent(QKeyEvent* e) override;
  void leaveEvent(QEvent* e) override;
  void focusOutEvent(QFocusEvent* e) override;

 private:
  void shutdown();
  void updateCursor();
  void tick();

  CachePanelState* state_;
  std::function<double()> clock_;
  ImGuiContext* ctx_ = nullptr;
  ImGuiInputQueue input_;
  QTimer timer_;
  double last_time_ = -1;
  quint64 frames_ = 0;
  double last_frame_ms_ = 0;
  int cursor_ = -2;
  double last_paint_ = -1;
};

}  // namespace rc::ui
