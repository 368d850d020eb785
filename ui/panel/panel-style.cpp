#include "panel/panel-style.h"

#include <algorithm>
#include <filesystem>

namespace rc::ui::panel {

ImU32 mix(ImU32 a, ImU32 b, float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  auto ch = [&](int shift) {
    const float x = float((a >> shift) & 0xFF), y = float((b >> shift) & 0xFF);
    return ImU32(x + (y - x) * t + 0.5f) << shift;
  };
  return ch(IM_COL32_R_SHIFT) | ch(IM_COL32_G_SHIFT) | ch(IM_COL32_B_SHIFT) | ch(IM_COL32_A_SHIFT);
}

ImU32 with_alpha(ImU32 c, float alpha) {
  const float a = float((c >> IM_COL32_A_SHIFT) & 0xFF) * std::clamp(alpha, 0.0f, 1.0f);
  return (c & ~IM_COL32_A_MASK) | (ImU32(a + 0.5f) << IM_COL32_A_SHIFT);
}

void apply_panel_style(ImGuiStyle& s) {
  ImGui::StyleColorsDark(&s);
  s.WindowPadding = ImVec2(10, 8);
  s.FramePadding = ImVec2(8, 4);
  s.ItemSpacing = ImVec2(8, 6);
  s.ItemInnerSpacing = ImVec2(6, 4);
  s.WindowRounding = 0;
  s.ChildRounding = 4;
  s.FrameRounding = 4;
  s.GrabRounding = 4;
  s.TabRounding = 4;
  s.PopupRounding = 4;
  s.ScrollbarRounding = 6;
  s.WindowBorderSize = 0;
  s.ChildBorderSize = 1;
  ImVec4* c = s.Colors;
  c[ImGuiCol_WindowBg] = ImVec4(22 / 255.0f, 25 / 255.0f, 32 / 255.0f, 1.0f);  // = Palette::canvas
  c[ImGuiCol_ChildBg] = ImVec4(0.086f, 0.098f, 0.125f, 1.0f);
  c[ImGuiCol_PopupBg] = ImVec4(0.12f, 0.13f, 0.16f, 0.98f);
  c[ImGuiCol_Border] = ImVec4(1, 1, 1, 0.08f);
  c[ImGuiCol_FrameBg] = ImVec4(0.16f, 0.18f, 0.22f, 1.0f);
  c[ImGuiCol_FrameBgHovered] = ImVec4(0.21f, 0.24f, 0.30f, 1.0f);
  c[ImGuiCol_FrameBgActive] = ImVec4(0.24f, 0.28f, 0.35f, 1.0f);
  c[ImGuiCol_Button] = ImVec4(0.18f, 0.21f, 0.27f, 1.0f);
  c[ImGuiCol_ButtonHovered] = ImVec4(0.12f, 0.45f, 0.57f, 1.0f);
  c[ImGuiCol_ButtonActive] = ImVec4(0.10f, 0.53f, 0.66f, 1.0f);
  c[ImGuiCol_Header] = ImVec4(0.12f, 0.45f, 0.57f, 0.45f);
  c[ImGuiCol_HeaderHovered] = ImVec4(0.12f, 0.45f, 0.57f, 0.70f);
  c[ImGuiCol_HeaderActive] = ImVec4(0.12f, 0.53f, 0.66f, 0.90f);
  c[ImGuiCol_CheckMark] = ImVec4(0.35f, 0.80f, 0.92f, 1.0f);
  c[ImGuiCol_Tab] = ImVec4(0.14f, 0.16f, 0.20f, 1.0f);
  c[ImGuiCol_TabHovered] = ImVec4(0.12f, 0.45f, 0.57f, 0.80f);
  c[ImGuiCol_TabActive] = ImVec4(0.12f, 0.40f, 0.50f, 1.0f);
  c[ImGuiCol_PlotLines] = ImVec4(0.35f, 0.80f, 0.92f, 1.0f);
  c[ImGuiCol_PlotHistogram] = ImVec4(0.35f, 0.80f, 0.92f, 1.0f);
  c[ImGuiCol_Text] = ImVec4(0.93f, 0.94f, 0.96f, 1.0f);
  c[ImGuiCol_TextDisabled] = ImVec4(0.56f, 0.60f, 0.67f, 1.0f);
}

ImFont* load_panel_font(ImGuiIO& io, float size_px) {
  static const ImWchar ranges[] = {
      0x0020, 0x00FF,  // Latin-1
      0x0100, 0x017F,  // Latin Extended-A
      0x2000, 0x206F,  // punctuation: … – —
      0x2190, 0x21FF,  // arrows: ↵ →
      0x23CE, 0x23CE,  // ⏎: an end of turn (readable_control_tokens)
      0x25A0, 0x25FF,  // shapes: ■ ▶
      0,
  };
  const char* paths[] = {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                         "/usr/share/fonts/TTF/DejaVuSans.ttf"};
  for (const char* p : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) continue;
    ImFontConfig cfg;
    cfg.OversampleH = 2;
    cfg.OversampleV = 2;
    if (ImFont* f = io.Fonts->AddFontFromFileTTF(p, size_px, &cfg, ranges)) return f;
  }
  return io.Fonts->AddFontDefault();
}

}  // namespace rc::ui::panel
