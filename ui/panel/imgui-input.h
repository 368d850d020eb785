// Qt input events -> Dear ImGui 1.86 input (the pre-1.87 API: io.MousePos,
// io.MouseDown[], io.MouseWheel, io.KeysDown[] with io.KeyMap[],
// io.AddInputCharactersUTF8).
//
// Qt delivers events between frames; ImGui samples state once per NewFrame.
// A press and release that both land between two frames would be lost, so a
// press is latched: the button (or key) reads as down for at least the next
// NewFrame, then the real state applies. GUI thread only.
#pragma once

#include <imgui.h>

#include <QPointF>
#include <QString>
#include <Qt>
#include <array>

namespace rc::ui {

class ImGuiInputQueue {
 public:
  // Fills io.KeyMap with the indices key() uses; once per context.
  static void setup_key_map(ImGuiIO& io);
  // Index into io.KeysDown for a Qt key, or -1 for keys ImGui does not use.
  static int key_index(int qt_key);

  void mouse_move(QPointF pos) {
    pos_ = pos;
    inside_ = true;
  }
  void mouse_leave() { inside_ = false; }
  void mouse_button(Qt::MouseButton button, bool down);
  void wheel(float dy, float dx) {
    wheel_ += dy;
    wheel_h_ += dx;
  }
  void key(int qt_key, bool down, Qt::KeyboardModifiers mods);
  void modifiers(Qt::KeyboardModifiers mods) { mods_ = mods; }
  void text(const QString& s) { text_ += s; }
  void focus_out();  // releases everything (a release may never come)

  // Before ImGui::NewFrame: writes the accumulated state into `io`.
  void begin_frame(ImGuiIO& io);
  // After ImGui::NewFrame: drops the latches the frame has seen.
  void after_new_frame();

 private:
  QPointF pos_;
  bool inside_ = false;
  std::array<bool, 5> down_{}, latched_{};
  std::array<bool, 512> key_down_{}, key_latched_{};
  float wheel_ = 0, wheel_h_ = 0;
  Qt::KeyboardModifiers mods_;
  QString text_;
};

}  // namespace rc::ui
