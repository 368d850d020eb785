// A Dear ImGui context with no window and no GL, styled and fonted like
// the cache panel and with its font atlas built, so a test can run the
// panel's frames and read the draw lists. One per test; it is current
// from construction to destruction.
#pragma once

#include <imgui.h>

#include "panel/panel-style.h"

namespace rc::ui::panel {

class HeadlessImGui {
 public:
  HeadlessImGui(ImVec2 display, float font_px) : ctx_(ImGui::CreateContext()) {
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = display;
    io.DeltaTime = 1.0f / 60;
    io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;  // big trees: 32-bit offsets
    apply_panel_style(ImGui::GetStyle());
    load_panel_font(io, font_px);
    unsigned char* px = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);
  }
  ~HeadlessImGui() { ImGui::DestroyContext(ctx_); }
  HeadlessImGui(const HeadlessImGui&) = delete;
  HeadlessImGui& operator=(const HeadlessImGui&) = delete;

 private:
  ImGuiContext* ctx_;
};

}  // namespace rc::ui::panel
