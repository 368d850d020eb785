#include "panel/panel-widgets.h"

#include <algorithm>

namespace rc::ui::panel {

void flow(float w, float spacing) {
  ImGui::SameLine(0, spacing);
  if (ImGui::GetCursorPosX() + w > ImGui::GetWindowContentRegionMax().x) ImGui::NewLine();
}

float button_w(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2;
}

float check_w(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label, nullptr, true).x;
}

float fit_width(float want, float least) {
  return std::max(std::min(want, ImGui::GetContentRegionAvail().x), least);
}

float fit_width(float want, const char* label, float least) {
  const float text = ImGui::CalcTextSize(label, nullptr, true).x;
  const float room = ImGui::GetContentRegionAvail().x -
                     (text > 0 ? text + ImGui::GetStyle().ItemInnerSpacing.x : 0);
  return std::max(std::min(want, room), least);
}

ImVec4 kind_colour(CacheEventKind k) {
  switch (k) {
    case CacheEventKind::insert:
      return ImVec4(0.42f, 0.86f, 0.55f, 1);
    case CacheEventKind::split:
    case CacheEventKind::merge:
      return ImVec4(0.95f, 0.95f, 0.95f, 1);
    case CacheEventKind::match:
      return ImVec4(1.0f, 0.82f, 0.36f, 1);
    case CacheEventKind::evict:
    case CacheEventKind::reset:
      return ImVec4(0.94f, 0.42f, 0.42f, 1);
    case CacheEventKind::pin:
    case CacheEventKind::unpin:
      return ImVec4(0.66f, 0.55f, 0.92f, 1);
    default:
      return ImVec4(0.70f, 0.72f, 0.78f, 1);
  }
}

}  // namespace rc::ui::panel
