#include "panel/panel-widgets.h"

#include <algorithm>
#include <cmath>

#include "panel/panel-style.h"

namespace rc::ui::panel {

void flow(float w, float spacing) {
  // Decided from the previous item's edge: SameLine and then NewLine would
  // leave the line's end (past the edge) in the window's content size.
  const float gap = spacing < 0 ? ImGui::GetStyle().ItemSpacing.x : spacing;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + gap + w <= right) ImGui::SameLine(0, spacing);
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

std::string fit_labelled(const char* label, float want, float least) {
  const float text = ImGui::CalcTextSize(label, nullptr, true).x;
  const float avail = ImGui::GetContentRegionAvail().x;
  // A pixel spare: ImGui rounds the frame and label positions.
  const float room = std::floor(avail - text - ImGui::GetStyle().ItemInnerSpacing.x) - 1;
  if (room >= least) {
    ImGui::SetNextItemWidth(std::min(want, room));
    return label;
  }
  ImGui::TextUnformatted(label);  // labels here carry no "##" suffix
  ImGui::SetNextItemWidth(std::max(std::min(want, avail), 1.0f));
  return std::string("##") + label;
}

void flow_text(const char* text, bool dim, float first_w) {
  flow(first_w >= 0 ? first_w : ImGui::CalcTextSize(text).x);
  if (dim) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  // Wrapped two pixels short of the edge: text wrapped beside another item
  // can otherwise end a pixel past it.
  ImGui::PushTextWrapPos(ImGui::GetWindowContentRegionMax().x - 2);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  if (dim) ImGui::PopStyleColor();
}

int window_lines() { return int(ImGui::GetWindowHeight() / ImGui::GetTextLineHeightWithSpacing()); }

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
    case CacheEventKind::draft:
      return ImGui::ColorConvertU32ToFloat4(Palette::drafted);
    default:
      return ImVec4(0.70f, 0.72f, 0.78f, 1);
  }
}

}  // namespace rc::ui::panel
