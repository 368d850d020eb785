// The tree view's explanation marks (node-marks.h): look-alike siblings and
// the context cut's branch point, on the box and in its tooltip; the cache
// tiers' marks: what of a node the tiers below the pool also hold, and a
// node just loaded back from them; and the node a draft was just read from.
#include <algorithm>
#include <cfloat>

#include "panel/label-text.h"
#include "panel/node-marks.h"
#include "panel/panel-style.h"
#include "panel/tree-view-frame.h"
#include "panel/tree-view.h"

namespace rc::ui::panel {

namespace {

// A tag across a box edge: a rounded plate of `colour` with dark text.
void edge_tag(ImDrawList* dl, ImFont* font, float size, float z, ImVec2 at, const char* text,
              ImU32 colour) {
  const ImVec2 ts = font->CalcTextSizeA(size, FLT_MAX, 0, text);
  dl->AddRectFilled(at - ImVec2(3 * z, 0), at + ts + ImVec2(3 * z, 0), colour, 5 * z);
  dl->AddText(font, size, at, Palette::rgba(28, 14, 8), text);
}

}  // namespace

void TreeView::draw_node_marks(const Frame& f, const TreeNode& n, ImVec2 p0, ImVec2 p1) {
  const float z = f.z;
  if (const SiblingDiff* d = f.in.look_alikes ? f.in.look_alikes->find(n.id) : nullptr) {
    // The corner shows at any zoom; the tag once text is readable.
    const float s = std::clamp(12 * z, 4.0f, 14.0f);
    f.dl->AddTriangleFilled(ImVec2(p1.x - s, p0.y), ImVec2(p1.x, p0.y), ImVec2(p1.x, p0.y + s),
                            MarkColours::look_alike);
    if (f.text1) {
      const bool same = d->why == LookAlike::same_text_split ||
                        d->why == LookAlike::same_text_space ||
                        d->why == LookAlike::same_text_bytes;
      const char* text = same ? "same text" : "looks alike";
      const ImVec2 ts = f.font->CalcTextSizeA(f.fs * 0.72f, FLT_MAX, 0, text);
      edge_tag(f.dl, f.font, f.fs * 0.72f, z, ImVec2(p1.x - ts.x - 8 * z, p1.y - ts.y * 0.35f),
               text, MarkColours::look_alike);
    }
    ++stats_.look_alikes_drawn;
  }
  if (f.in.context_cut && f.in.context_cut->node == n.id) {
    const ImVec2 g(6, 6);
    f.dl->AddRect(p0 - g, p1 + g, MarkColours::context_cut, 3.0f, 0, 2.0f);
    if (f.text1) {
      const std::string text = f.in.context_cut->badge();
      edge_tag(f.dl, f.font, f.fs * 0.72f, z, ImVec2(p0.x + 6 * z, p1.y + 6 - f.fs * 0.36f),
               text.c_str(), MarkColours::context_cut);
    }
    ++stats_.cut_marks_drawn;
  }
}

// A stripe along the box's bottom edge, as long as the share of its tokens
// the tiers hold, and (with text) a tag naming the lowest tier.
void TreeView::draw_tier_marks(const Frame& f, const TreeNode& n, ImVec2 p0, ImVec2 p1) {
  const float z = f.z;
  const double loaded_age = f.in.now - n.promoted_at;
  if (loaded_age < kLoadedGlow && f.text1) {
    const float a = float(1.0 - loaded_age / kLoadedGlow);
    const ImVec2 ts = f.font->CalcTextSizeA(f.fs * 0.72f, FLT_MAX, 0, "loaded");
    edge_tag(f.dl, f.font, f.fs * 0.72f, z, ImVec2(p0.x + 6 * z + ts.x * 1.6f, p0.y - ts.y * 0.65f),
             "loaded", with_alpha(Palette::loaded, a));
  }
  if (n.held_below == 0 || n.tokens.empty() || f.in.sink_tier.empty()) return;
  const float share = std::min(1.0f, float(n.held_below) / float(n.tokens.size()));
  const float h = std::clamp(4 * z, 2.0f, 5.0f);
  f.dl->AddRectFilled(ImVec2(p0.x, p1.y - h), ImVec2(p0.x + (p1.x - p0.x) * share, p1.y),
                      Palette::tier);
  if (f.text1) {
    const char* text = f.in.sink_tier.c_str();
    const ImVec2 ts = f.font->CalcTextSizeA(f.fs * 0.72f, FLT_MAX, 0, text);
    edge_tag(f.dl, f.font, f.fs * 0.72f, z, ImVec2(p1.x - ts.x - 8 * z, p0.y - ts.y * 0.65f), text,
             Palette::tier);
  }
  ++stats_.tier_marks_drawn;
}

// A draft's source: a fading outline and, with text, a tag under the box
// with what was drafted from it and kept while the mark lasts.
void TreeView::draw_draft_mark(const Frame& f, const TreeNode& n, ImVec2 p0, ImVec2 p1) {
  const double age = f.in.now - n.drafted_at;
  if (!(age < kDraftGlow)) return;
  const float a = float(1.0 - age / kDraftGlow);
  const ImVec2 g(3.5f, 3.5f);
  f.dl->AddRect(p0 - g, p1 + g, with_alpha(Palette::drafted, a), 3.0f, 0, 2.5f);
  if (f.text1) {
    const std::string text = draft_text(n.draft_tokens, n.draft_kept);
    const float fs = f.fs * 0.72f;
    const ImVec2 ts = f.font->CalcTextSizeA(fs, FLT_MAX, 0, text.c_str());
    edge_tag(f.dl, f.font, fs, f.z, ImVec2(p1.x - ts.x - 8 * f.z, p1.y + 3.5f - ts.y * 0.5f),
             text.c_str(), with_alpha(Palette::drafted, a));
  }
  ++stats_.draft_marks_drawn;
}

void TreeView::draw_marks_tooltip(const TreeViewInput& in, const TreeNode& n) const {
  if (n.id != kRootNode && !in.tiers.empty()) {
    ImGui::Separator();
    const ImVec4 blue = ImGui::ColorConvertU32ToFloat4(Palette::tier);
    if (n.held_below > 0)
      ImGui::TextColored(blue, "held below: %s of %s also in the tiers (%s)",
                         thousands(int64_t(n.held_below)).c_str(),
                         plural(int64_t(n.tokens.size()), "token").c_str(), in.tiers.c_str());
    else
      ImGui::TextDisabled("held below: none yet (tiers: %s; whole blocks only)", in.tiers.c_str());
    if (in.now - n.promoted_at < kLoadedGlow)
      ImGui::TextColored(blue, "just loaded back from the tiers instead of recomputed");
  }
  if (in.now - n.drafted_at < kDraftGlow) {
    ImGui::Separator();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(Palette::drafted),
                       "a draft was just read from here: %s",
                       draft_text(n.draft_tokens, n.draft_kept).c_str());
    ImGui::TextDisabled(
        "the model checked the drafted tokens in one pass and kept what it would "
        "have written itself");
  }
  const ImVec4 amber = ImGui::ColorConvertU32ToFloat4(MarkColours::look_alike);
  const ImVec4 red = ImGui::ColorConvertU32ToFloat4(MarkColours::context_cut);
  if (const SiblingDiff* d = in.look_alikes ? in.look_alikes->find(n.id) : nullptr) {
    ImGui::Separator();
    ImGui::TextColored(amber, "Looks like its sibling #%u: %s", d->sibling,
                       look_alike_why(d->why, d->text_offset).c_str());
    ImGui::Text("first differing token: %s", first_difference_where(*d).c_str());
    ImGui::Text("  here: %s", token_and_piece(d->token, d->piece).c_str());
    ImGui::Text("  #%u: %s", d->sibling,
                token_and_piece(d->sibling_token, d->sibling_piece).c_str());
  }
  if (in.context_cut && in.context_cut->node == n.id) {
    ImGui::Separator();
    ImGui::TextColored(red, "%s", in.context_cut->badge().c_str());
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + ImGui::GetFontSize() * 30);
    ImGui::TextWrapped("%s", in.context_cut->detail().c_str());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace rc::ui::panel
