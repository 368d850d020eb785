#include "panel/imgui-input.h"

#include <cfloat>

namespace rc::ui {

int ImGuiInputQueue::key_index(int k) {
  // Qt's special keys are 0x01000000 + a small number; printable keys are
  // their (upper-case) Latin-1 code. Both fit in KeysDown[512] this way.
  if (k >= 0x01000000 && k <= 0x010000FF) return 256 + (k & 0xFF);
  if (k > 0 && k < 256) return k;
  return -1;
}

void ImGuiInputQueue::setup_key_map(ImGuiIO& io) {
  io.KeyMap[ImGuiKey_Tab] = key_index(Qt::Key_Tab);
  io.KeyMap[ImGuiKey_LeftArrow] = key_index(Qt::Key_Left);
  io.KeyMap[ImGuiKey_RightArrow] = key_index(Qt::Key_Right);
  io.KeyMap[ImGuiKey_UpArrow] = key_index(Qt::Key_Up);
  io.KeyMap[ImGuiKey_DownArrow] = key_index(Qt::Key_Down);
  io.KeyMap[ImGuiKey_PageUp] = key_index(Qt::Key_PageUp);
  io.KeyMap[ImGuiKey_PageDown] = key_index(Qt::Key_PageDown);
  io.KeyMap[ImGuiKey_Home] = key_index(Qt::Key_Home);
  io.KeyMap[ImGuiKey_End] = key_index(Qt::Key_End);
  io.KeyMap[ImGuiKey_Insert] = key_index(Qt::Key_Insert);
  io.KeyMap[ImGuiKey_Delete] = key_index(Qt::Key_Delete);
  io.KeyMap[ImGuiKey_Backspace] = key_index(Qt::Key_Backspace);
  io.KeyMap[ImGuiKey_Space] = key_index(Qt::Key_Space);
  io.KeyMap[ImGuiKey_Enter] = key_index(Qt::Key_Return);
  io.KeyMap[ImGuiKey_Escape] = key_index(Qt::Key_Escape);
  io.KeyMap[ImGuiKey_KeyPadEnter] = key_index(Qt::Key_Enter);
  io.KeyMap[ImGuiKey_A] = key_index(Qt::Key_A);
  io.KeyMap[ImGuiKey_C] = key_index(Qt::Key_C);
  io.KeyMap[ImGuiKey_V] = key_index(Qt::Key_V);
  io.KeyMap[ImGuiKey_X] = key_index(Qt::Key_X);
  io.KeyMap[ImGuiKey_Y] = key_index(Qt::Key_Y);
  io.KeyMap[ImGuiKey_Z] = key_index(Qt::Key_Z);
}

void ImGuiInputQueue::mouse_button(Qt::MouseButton button, bool down) {
  int i;
  switch (button) {
    case Qt::LeftButton:
      i = 0;
      break;
    case Qt::RightButton:
      i = 1;
      break;
    case Qt::MiddleButton:
      i = 2;
      break;
    case Qt::BackButton:
      i = 3;
      break;
    case Qt::ForwardButton:
      i = 4;
      break;
    default:
      return;
  }
  down_[size_t(i)] = down;
  if (down) latched_[size_t(i)] = true;
}

void ImGuiInputQueue::key(int qt_key, bool down, Qt::KeyboardModifiers mods) {
  mods_ = mods;
  const int i = key_index(qt_key);
  if (i < 0) return;
  key_down_[size_t(i)] = down;
  if (down) key_latched_[size_t(i)] = true;
}

void ImGuiInputQueue::focus_out() {
  down_.fill(false);
  latched_.fill(false);
  key_down_.fill(false);
  key_latched_.fill(false);
  mods_ = Qt::NoModifier;
}

void ImGuiInputQueue::begin_frame(ImGuiIO& io) {
  io.MousePos = inside_ || down_[0] || down_[1] || down_[2]
                    ? ImVec2(float(pos_.x()), float(pos_.y()))
                    : ImVec2(-FLT_MAX, -FLT_MAX);
  for (size_t i = 0; i < down_.size(); ++i) io.MouseDown[i] = down_[i] || latched_[i];
  io.MouseWheel += wheel_;
  io.MouseWheelH += wheel_h_;
  wheel_ = wheel_h_ = 0;
  for (size_t i = 0; i < key_down_.size(); ++i) io.KeysDown[i] = key_down_[i] || key_latched_[i];
  io.KeyCtrl = mods_.testFlag(Qt::ControlModifier);
  io.KeyShift = mods_.testFlag(Qt::ShiftModifier);
  io.KeyAlt = mods_.testFlag(Qt::AltModifier);
  io.KeySuper = mods_.testFlag(Qt::MetaModifier);
  if (!text_.isEmpty()) {
    io.AddInputCharactersUTF8(text_.toUtf8().constData());
    text_.clear();
  }
}

void ImGuiInputQueue::after_new_frame() {
  latched_.fill(false);
  key_latched_.fill(false);
}

}  // namespace rc::ui
