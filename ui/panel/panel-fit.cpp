#include "panel/panel-fit.h"

#include <imgui_internal.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace rc::ui::panel {

namespace {

void complain(PanelFit& fit, const ImGuiWindow* w, const char* what, float by) {
  if (!fit.overflow.empty()) fit.overflow += "; ";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: %s %.0f px", w->Name, what, double(by));
  fit.overflow += buf;
}

}  // namespace

PanelFit measure_panel_fit() {
  PanelFit fit;
  ImGuiContext& g = *ImGui::GetCurrentContext();
  fit.display = g.IO.DisplaySize;
  constexpr float kSlack = 0.5f;  // rounding of item positions
  for (ImGuiWindow* w : g.Windows) {
    // The fallback "Debug##Default" window is begun by NewFrame and never drawn.
    if (!w->Active || w->Hidden || w->SkipItems || w->IsFallbackWindow) continue;
    ++fit.windows;
    if (w->Flags & ImGuiWindowFlags_Tooltip) ++fit.tooltips;
    const ImVec2 wmax(w->Pos.x + w->Size.x, w->Pos.y + w->Size.y);
    fit.windows_max =
        ImVec2(std::max(fit.windows_max.x, wmax.x), std::max(fit.windows_max.y, wmax.y));
    if (w->Pos.x < -kSlack) complain(fit, w, "window starts left of the display by", -w->Pos.x);
    if (w->Pos.y < -kSlack) complain(fit, w, "window starts above the display by", -w->Pos.y);
    if (wmax.x > fit.display.x + kSlack)
      complain(fit, w, "window ends right of the display by", wmax.x - fit.display.x);
    if (wmax.y > fit.display.y + kSlack)
      complain(fit, w, "window ends below the display by", wmax.y - fit.display.y);
    // Items: CursorMaxPos is the far corner of everything laid out here.
    const ImVec2 items = w->DC.CursorMaxPos;
    const bool scrolls_x = (w->Flags & ImGuiWindowFlags_HorizontalScrollbar) &&
                           !(w->Flags & ImGuiWindowFlags_NoScrollbar);
    const bool scrolls_y = !(w->Flags & ImGuiWindowFlags_NoScrollbar) &&
                           !(w->Flags & ImGuiWindowFlags_AlwaysAutoResize) &&
                           !(w->Flags & ImGuiWindowFlags_Tooltip);
    if (!scrolls_x) {
      fit.items_max.x = std::max(fit.items_max.x, items.x);
      if (items.x > w->InnerRect.Max.x + kSlack)
        complain(fit, w, "items end right of the window by", items.x - w->InnerRect.Max.x);
    }
    if (!scrolls_y) {
      fit.items_max.y = std::max(fit.items_max.y, items.y);
      if (items.y > w->InnerRect.Max.y + kSlack)
        complain(fit, w, "items end below the window by", items.y - w->InnerRect.Max.y);
    }
  }
  return fit;
}

ImVec2 keep_inside(ImVec2 pos, ImVec2 size, ImVec2 display, ImVec2 pad) {
  auto axis = [](float p, float s, float d, float m) {
    return std::max(std::min(p, d - m - s), m);
  };
  return ImVec2(axis(pos.x, size.x, display.x, pad.x), axis(pos.y, size.y, display.y, pad.y));
}

ImVec2 tooltip_max_size(ImVec2 display, ImVec2 pad) {
  return ImVec2(std::max(display.x - 2 * pad.x, 1.0f), std::max(display.y - 2 * pad.y, 1.0f));
}

float tooltip_wrap_width() {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float room =
      ImGui::GetIO().DisplaySize.x - 2 * st.WindowPadding.x - 2 * st.DisplaySafeAreaPadding.x - 8;
  return std::max(std::min(ImGui::GetFontSize() * 30, room), ImGui::GetFontSize() * 6);
}

void begin_tooltip() {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const ImVec2 pad = ImGui::GetStyle().DisplaySafeAreaPadding;
  ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), tooltip_max_size(display, pad));
  ImGui::BeginTooltip();
  // ImGui places a tooltip by the mouse and pushes it inside the display
  // when it can; its size is last frame's, so one that grew is moved here.
  ImGuiWindow* w = ImGui::GetCurrentWindow();
  const ImVec2 at = keep_inside(w->Pos, w->Size, display, pad);
  if (at.x != w->Pos.x || at.y != w->Pos.y) ImGui::SetWindowPos(at);
  ImGui::PushTextWrapPos(ImGui::GetCursorPos().x + tooltip_wrap_width());
}

void end_tooltip() {
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void tooltip(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  begin_tooltip();
  ImGui::TextV(fmt, args);
  end_tooltip();
  va_end(args);
}

}  // namespace rc::ui::panel
