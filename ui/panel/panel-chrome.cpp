// The parts of the panel's frame that serve the room it is shown in: the
// text scale for projectors (Ctrl +/-/0 and the A-/A+ buttons), the
// draggable bar between the tree and the tabs, and the line that says what
// the `off` policy means.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "panel/cache-panel-state.h"
#include "panel/panel-fit.h"
#include "panel/panel-style.h"
#include "panel/panel-widgets.h"

namespace rc::ui {

using panel::Palette;

void CachePanelState::set_text_scale(float scale) {
  scale = std::clamp(scale, panel::FrameState::kMinTextScale, panel::FrameState::kMaxTextScale);
  if (scale == frame.text_scale) return;
  frame.text_scale = scale;
  tree.set_text_scale(scale, panel::FrameState::kBaseFontPx);
}

// Ctrl + / Ctrl = larger, Ctrl - smaller, Ctrl 0 back to 100%. Keys reach
// ImGui while the panel has the keyboard focus (click it first).
void CachePanelState::handle_text_scale_keys() {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl) return;
  auto pressed = [](int key) { return ImGui::IsKeyPressed(key, true); };
  if (pressed('=') || pressed('+'))
    set_text_scale(frame.text_scale * panel::FrameState::kTextScaleStep);
  else if (pressed('-'))
    set_text_scale(frame.text_scale / panel::FrameState::kTextScaleStep);
  else if (pressed('0'))
    set_text_scale(1.0f);
}

float CachePanelState::text_scale_buttons_w() const {
  return panel::button_w("A-") + ImGui::GetStyle().ItemSpacing.x + panel::button_w("A+");
}

void CachePanelState::draw_text_scale_buttons() {
  ImGui::BeginDisabled(frame.text_scale <= panel::FrameState::kMinTextScale);
  if (ImGui::Button("A-")) set_text_scale(frame.text_scale / panel::FrameState::kTextScaleStep);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered()) panel::tooltip("Smaller text (Ctrl -)");
  ImGui::SameLine();
  ImGui::BeginDisabled(frame.text_scale >= panel::FrameState::kMaxTextScale);
  if (ImGui::Button("A+")) set_text_scale(frame.text_scale * panel::FrameState::kTextScaleStep);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered())
    panel::tooltip("Larger text for a projector (Ctrl +; Ctrl 0 resets). Now %.0f%%.",
                   double(frame.text_scale * 100));
}

bool CachePanelState::policy_off() const {
  return source.feed && std::string(kCachePolicies[settings_policy]) == "off";
}

// `off` keeps sequences only until their pages are reused, and matches
// nothing: the tree shows what is in flight, and this line says why.
void CachePanelState::draw_off_notice() {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(Palette::held));
  ImGui::TextWrapped(
      "Cache off: nothing is reused. Every request computes its whole prompt; only the "
      "requests in flight are drawn.");
  ImGui::PopStyleColor();
}

// A bar the width of the panel between the tree and the tabs; dragging it
// moves the split from where it is drawn (`bottom_h`, the tabs' height of
// `total_h`), and from then on the user's share holds (frame-state.h).
namespace panel {

float FrameState::tabs_height(float room, float tree_least, float tabs_least) const {
  const float share = user_split > 0 ? user_split : bottom_share();
  const float hi = std::max(room - tree_least, 0.0f);
  return std::clamp(room * share, std::min(tabs_least, hi), hi);
}

}  // namespace panel

void CachePanelState::draw_split_handle(float total_h, float bottom_h) {
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = panel::FrameState::kSplitHandlePx;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##split", ImVec2(w, h));
  frame.split_box = {"split", p0, ImVec2(p0.x + w, p0.y + h), 0, ImGui::IsItemVisible()};
  const bool hot = ImGui::IsItemHovered() || ImGui::IsItemActive();
  if (hot) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeNS);
  const float dy = ImGui::GetIO().MouseDelta.y;
  if (ImGui::IsItemActive() && total_h > 0 && dy != 0)
    frame.user_split = std::clamp((bottom_h - dy) / total_h, 0.01f, 1.0f);
  const float y = p0.y + h * 0.5f;
  ImGui::GetWindowDrawList()->AddLine(ImVec2(p0.x + w * 0.42f, y), ImVec2(p0.x + w * 0.58f, y),
                                      hot ? Palette::text : Palette::edge, 3.0f);
  if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
    panel::tooltip("Drag to share the height between the tree and the tabs");
}

}  // namespace rc::ui
