#include "panel/cache-panel-gl.h"

#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <QKeyEvent>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QWheelEvent>
#include <chrono>

#include "panel/cache-panel-state.h"
#include "panel/panel-style.h"

namespace rc::ui {

CachePanelGl::CachePanelGl(CachePanelState* state, std::function<double()> clock, QWidget* parent)
    : QOpenGLWidget(parent), state_(state), clock_(std::move(clock)) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(320, 320);
  connect(&timer_, &QTimer::timeout, this, &CachePanelGl::tick);
  timer_.start(16);
}

CachePanelGl::~CachePanelGl() { shutdown(); }

void CachePanelGl::tick() {
  const double now = clock_();
  if (state_->wants_frames(now) || now - last_paint_ >= 0.25) update();
}

void CachePanelGl::setFrameInterval(int ms) {
  if (ms <= 0)
    timer_.stop();
  else
    timer_.start(ms);
}

void CachePanelGl::shutdown() {
  if (!ctx_) return;
  // The renderer's GL objects belong to this widget's context.
  makeCurrent();
  ImGui::SetCurrentContext(ctx_);
  ImGui_ImplOpenGL3_Shutdown();
  ImGui::DestroyContext(ctx_);
  ctx_ = nullptr;
  doneCurrent();
}

void CachePanelGl::initializeGL() {
  // initializeGL runs again if the widget moves to another top-level window
  // (a new context): start over with a fresh ImGui context.
  if (ctx_) {
    ImGui::SetCurrentContext(ctx_);
    ImGui_ImplOpenGL3_Shutdown();
    ImGui::DestroyContext(ctx_);
    ctx_ = nullptr;
  }
  connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, &CachePanelGl::shutdown,
          Qt::UniqueConnection);
  IMGUI_CHECKVERSION();
  ctx_ = ImGui::CreateContext();
  ImGui::SetCurrentContext(ctx_);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // no imgui.ini next to the user's files
  io.LogFilename = nullptr;
  ImGuiInputQueue::setup_key_map(io);
  panel::apply_panel_style(ImGui::GetStyle());
  panel::load_panel_font(io, panel::FrameState::kBaseFontPx * state_->frame.text_scale);
  state_->frame.font_atlas_scale = state_->frame.text_scale;
  state_->tree.view.font_size = panel::FrameState::kBaseFontPx * state_->frame.text_scale;
  const bool gles = context()->isOpenGLES();
  if (!ImGui_ImplOpenGL3_Init(gles ? "#version 300 es" : "#version 130")) {
    ImGui::DestroyContext(ctx_);
    ctx_ = nullptr;
  }
}

void CachePanelGl::paintGL() {
  QOpenGLFunctions* gl = context()->functions();
  const qreal dpr = devicePixelRatioF();
  gl->glViewport(0, 0, int(width() * dpr), int(height() * dpr));
  // The canvas colour (Palette::canvas): the tree view paints no background.
  gl->glClearColor(22 / 255.0f, 25 / 255.0f, 32 / 255.0f, 1.0f);
  gl->glClear(GL_COLOR_BUFFER_BIT);
  if (!ctx_) return;
  const auto t0 = std::chrono::steady_clock::now();
  ImGui::SetCurrentContext(ctx_);
  ImGuiIO& io = ImGui::GetIO();
  const double now = clock_();
  last_paint_ = now;
  io.DeltaTime = last_time_ < 0 ? 1.0f / 60 : float(std::max(now - last_time_, 1e-4));
  last_time_ = now;
  io.DisplaySize = ImVec2(float(width()), float(height()));
  io.DisplayFramebufferScale = ImVec2(float(dpr), float(dpr));
  input_.begin_frame(io);
  if (state_->frame.font_atlas_scale != state_->frame.text_scale) {
    // The text scale changed (Ctrl +/-): a crisp atlas at the new size
    // instead of a stretched one. Between frames, as ImGui requires.
    io.Fonts->Clear();
    panel::load_panel_font(io, panel::FrameState::kBaseFontPx * state_->frame.text_scale);
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
    state_->frame.font_atlas_scale = state_->frame.text_scale;
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
  input_.after_new_frame();
  state_->sync(now);
  state_->draw(now);
  ImGui::Render();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  updateCursor();
  ++frames_;
  last_frame_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void CachePanelGl::updateCursor() {
  const int c = ImGui::GetMouseCursor();
  if (c == cursor_) return;
  cursor_ = c;
  switch (c) {
    case ImGuiMouseCursor_TextInput:
      setCursor(Qt::IBeamCursor);
      break;
    case ImGuiMouseCursor_Hand:
      setCursor(Qt::PointingHandCursor);
      break;
    case ImGuiMouseCursor_ResizeEW:
      setCursor(Qt::SizeHorCursor);
      break;
    case ImGuiMouseCursor_ResizeNS:
      setCursor(Qt::SizeVerCursor);
      break;
    case ImGuiMouseCursor_ResizeAll:
      setCursor(Qt::SizeAllCursor);
      break;
    case ImGuiMouseCursor_NotAllowed:
      setCursor(Qt::ForbiddenCursor);
      break;
    default:
      setCursor(Qt::ArrowCursor);
      break;
  }
}

void CachePanelGl::mouseMoveEvent(QMouseEvent* e) {
  input_.mouse_move(e->position());
  update();
}

void CachePanelGl::mousePressEvent(QMouseEvent* e) {
  input_.mouse_move(e->position());
  input_.mouse_button(e->button(), true);
  update();
}

void CachePanelGl::mouseReleaseEvent(QMouseEvent* e) {
  input_.mouse_move(e->position());
  input_.mouse_button(e->button(), false);
  update();
}

// Qt sends press, release, double-click, release; ImGui detects the double
// click itself from two presses, so the double-click event counts as a press.
void CachePanelGl::mouseDoubleClickEvent(QMouseEvent* e) { mousePressEvent(e); }

void CachePanelGl::wheelEvent(QWheelEvent* e) {
  // One notch is 120 units (15 degrees); ImGui counts notches.
  input_.wheel(float(e->angleDelta().y()) / 120.0f, float(e->angleDelta().x()) / 120.0f);
  e->accept();
  update();
}

void CachePanelGl::keyPressEvent(QKeyEvent* e) {
  input_.key(e->key(), true, e->modifiers());
  if (!e->text().isEmpty() && e->text().at(0).isPrint()) input_.text(e->text());
  update();
}

void CachePanelGl::keyReleaseEvent(QKeyEvent* e) {
  input_.key(e->key(), false, e->modifiers());
  update();
}

void CachePanelGl::leaveEvent(QEvent* e) {
  input_.mouse_leave();
  QOpenGLWidget::leaveEvent(e);
}

void CachePanelGl::focusOutEvent(QFocusEvent* e) {
  input_.focus_out();
  QOpenGLWidget::focusOutEvent(e);
}

}  // namespace rc::ui
