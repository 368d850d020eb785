// CachePanelState's explanation marks (node-marks.h): the context cut the
// app reports, and what the Node tab says about the marks and about a
// draft read from a node. TreeState keeps the marks up to date.
#include <imgui.h>

#include <cstdio>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "panel/panel-style.h"
#include "panel/panel-widgets.h"

namespace rc::ui {

void CachePanelState::mark_context_cut(int dropped, const std::vector<Token>& prompt,
                                       int64_t reused, double now) {
  // The cut is the user's chat's: it marks the user's tree, parked or not.
  panel::TreeState& t = user_tree();
  panel::ContextCut& cut = t.context_cut;
  cut.mark(dropped, prompt, reused, now);
  cut.resolve(t.model, true);
  last_activity = now;  // frames for the banner
  std::string where;
  if (prompt.empty())
    where = "the next prompt starts a new branch after the system prompt";
  else if (cut.node == kNoNode)
    where = "the prompt's shared prefix is no longer cached";
  else
    where = "the prompt reused " + panel::plural(cut.reused, "token") + " and branches off at " +
            (cut.node == kRootNode ? std::string("the root")
                                   : std::string(1, '#').append(std::to_string(cut.node)));
  log.note("context cut: the earliest " + panel::plural(dropped, "message") +
               " no longer fit; the cached prefix changed (" + where + ")",
           now);
}

std::string CachePanelState::draft_line() const {
  const panel::TreeModel::DraftCounts& c = tree.model.draft_counts();
  // Drafts that kept nothing (a first reply's prompt lookup) saved nothing:
  // the Events tab logs them, the header waits for one that paid.
  if (c.accepted_tokens == 0) return "";
  return "drafts: " + panel::thousands(int64_t(c.accepted_tokens)) + " of " +
         panel::plural(int64_t(c.drafted_tokens), "token") + " kept";
}

void CachePanelState::draw_node_marks_tab(const panel::TreeNode& n) {
  if (now_ - n.drafted_at < panel::kDraftGlow) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(panel::Palette::drafted));
    ImGui::TextWrapped("A draft was just read from this node: %s tokens.",
                       panel::draft_text(n.draft_tokens, n.draft_kept).c_str());
    ImGui::PopStyleColor();
    ImGui::TextWrapped(
        "Drafted decoding proposes what the cache holds after the request's text; the model "
        "checks the drafted tokens in one pass and keeps those it would have written itself.");
  }
  const ImVec4 amber = ImGui::ColorConvertU32ToFloat4(panel::MarkColours::look_alike);
  const ImVec4 red = ImGui::ColorConvertU32ToFloat4(panel::MarkColours::context_cut);
  if (const panel::SiblingDiff* d = tree.look_alikes.find(n.id)) {
    ImGui::PushStyleColor(ImGuiCol_Text, amber);
    ImGui::TextWrapped("Looks like its sibling #%u: %s.", d->sibling,
                       panel::look_alike_why(d->why, d->text_offset).c_str());
    ImGui::PopStyleColor();
    ImGui::TextWrapped("First differing token: %s", panel::first_difference_where(*d).c_str());
    ImGui::BulletText("this node: %s", panel::token_and_piece(d->token, d->piece).c_str());
    ImGui::BulletText("#%u: %s", d->sibling,
                      panel::token_and_piece(d->sibling_token, d->sibling_piece).c_str());
    if (d->others > 0)
      ImGui::TextDisabled("(%s more sibling%s read the same)",
                          panel::thousands(int64_t(d->others)).c_str(), d->others == 1 ? "" : "s");
    char button[48];
    std::snprintf(button, sizeof button, "Select #%u", d->sibling);
    if (ImGui::SmallButton(button)) {
      const NodeId other = d->sibling;
      tree.select(other);
      tree.view.focus(other);
    }
  }
  if (tree.context_cut.active() && tree.context_cut.node == n.id) {
    ImGui::PushStyleColor(ImGuiCol_Text, red);
    ImGui::TextWrapped("%s", tree.context_cut.badge().c_str());
    ImGui::PopStyleColor();
    ImGui::TextWrapped("%s", tree.context_cut.detail().c_str());
  }
}

}  // namespace rc::ui
