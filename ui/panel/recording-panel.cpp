// The panel's recordings: Record/Stop and Open in the header,
// the timeline over the tree while a recording is shown, and its Request
// and Advisor tabs. The logic is in recording-view.cpp; the timeline item
// in recording-timeline.cpp.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "panel/miss-view.h"
#include "panel/panel-fit.h"
#include "panel/panel-style.h"
#include "panel/panel-widgets.h"
#include "panel/recording-timeline.h"

namespace rc::ui {

using panel::button_w;
using panel::flow;

namespace {
const ImVec4 kWarn(1.0f, 0.62f, 0.35f, 1.0f);
const ImVec4 kRec(1.0f, 0.4f, 0.4f, 1.0f);
}  // namespace

bool CachePanelState::can_record() const {
  return source.feed && source.feed->engine() && !lesson_shown() && !remote_shown() &&
         !replay.shown();
}

void CachePanelState::tee_recording(const std::vector<CacheEvent>& events, bool overflowed) {
  panel::RecordingSink* sink = replay.sink();
  if (!sink || !source.feed || source.feed.get() != user_feed() || remote_shown() || replay.shown())
    return;
  if (!events.empty() || overflowed) sink->events(events, overflowed);
}

CacheSnapshot CachePanelState::shown_tree() const {
  CacheSnapshot s;
  s.next_seq = replay_shown() ? replay.cursor().applied : 0;
  s.total_pages = int64_t(source.cache_stats.total_pages);
  for (const auto& [id, n] : tree.model.nodes())
    s.nodes.push_back(
        {id, n.parent, n.tokens, n.pages, n.lock_ref, n.pin_ref, n.last_access, n.hits});
  std::sort(s.nodes.begin(), s.nodes.end(),
            [](const CacheNodeInfo& a, const CacheNodeInfo& b) { return a.id < b.id; });
  return s;
}

// Header: Record / Stop, Open recording / Close, Export.
void CachePanelState::draw_recording_buttons(double now) {
  if (replay.starter && replay.pick_file && !replay_shown()) {
    if (replay.recording()) {
      flow(button_w("Stop recording"));
      ImGui::PushStyleColor(ImGuiCol_Text, kRec);
      if (ImGui::Button("Stop recording")) replay.stop_recording();
      ImGui::PopStyleColor();
    } else {
      flow(button_w("Record..."));
      ImGui::BeginDisabled(!can_record());
      if (ImGui::Button("Record...")) replay.pick_file(true);
      ImGui::EndDisabled();
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        panel::tooltip(can_record() ? "Record this engine's cache events and requests to a file"
                                    : "Record follows the local engine: load a model, and "
                                      "leave the lesson, the remote cache or the recording");
    }
  }
  if (replay.opener && replay.pick_file) {
    if (replay.shown()) {
      const char* label = frame.narrow_toolbar ? "Close###close" : "Close recording###close";
      flow(button_w(label));
      if (ImGui::Button(label)) replay.close();
      if (ImGui::IsItemHovered()) panel::tooltip("Close the recording: back to your own tree");
    } else {
      const char* label = frame.narrow_toolbar ? "Open...###open" : "Open recording...###open";
      flow(button_w(label));
      const bool busy = replay.recording() || lesson_shown() || remote_shown();
      ImGui::BeginDisabled(busy);
      if (ImGui::Button(label)) replay.pick_file(false);
      ImGui::EndDisabled();
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        panel::tooltip(busy ? "Open a recording: stop recording, and leave the lesson or the "
                              "remote cache, first"
                            : "Open a recording to scrub (radixchat-cli bench/serve --record, or "
                              "Record here)");
    }
  }
  if (replay.export_tree && source.feed) {
    flow(button_w("Export..."));
    if (ImGui::Button("Export...")) replay.export_tree();
    if (ImGui::IsItemHovered())
      panel::tooltip(replay_shown() ? "Save the tree at this moment of the recording as SVG or PNG"
                                    : "Save the tree shown as SVG or PNG");
  }
  (void)now;
}

// One line under the header: what is being recorded, or why it stopped.
void CachePanelState::draw_recording_status() {
  if (replay.sink() && replay.sink()->stopped()) replay.stop_recording();
  const std::string status = replay.record_status();
  if (!status.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, replay.recording() ? kRec : kWarn);
    ImGui::TextWrapped("%s", status.c_str());
    ImGui::PopStyleColor();
  }
  if (!replay.open_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kWarn);
    ImGui::TextWrapped("%s", replay.open_error.c_str());
    ImGui::PopStyleColor();
  }
}

// Transport controls, the timeline, the slider and the play speed.
void CachePanelState::draw_timeline_section(double now) {
  panel::RecordingSource* src = replay.source();
  if (!src) return;
  const uint64_t first = src->first_seq(), end = src->end_seq();
  const uint64_t at = replay.cursor().target;
  if (ImGui::Button("|<")) replay.seek(first);
  if (ImGui::IsItemHovered()) panel::tooltip("The start of the recording");
  ImGui::SameLine();
  if (ImGui::Button("< req")) replay_step_request(-1, now);
  if (ImGui::IsItemHovered()) panel::tooltip("Back to the previous request");
  ImGui::SameLine();
  if (ImGui::Button("< ev")) replay.step_event(-1);
  if (ImGui::IsItemHovered()) panel::tooltip("Back one event");
  ImGui::SameLine();
  if (ImGui::Button(replay.playing ? "Pause##play" : "Play##play")) {
    if (!replay.playing && at >= end) replay.seek(first);
    replay.playing = !replay.playing;
  }
  ImGui::SameLine();
  if (ImGui::Button("ev >")) replay.step_event(1);
  if (ImGui::IsItemHovered()) panel::tooltip("Forward one event");
  ImGui::SameLine();
  if (ImGui::Button("req >")) replay_step_request(1, now);
  if (ImGui::IsItemHovered()) panel::tooltip("On to the next request");
  ImGui::SameLine();
  if (ImGui::Button(">|")) replay.seek(end);

  const float w = ImGui::GetContentRegionAvail().x;
  // A short panel (a laptop's screen) gives the tree below the room.
  const float plot_h =
      ImGui::GetFontSize() * (ImGui::GetContentRegionAvail().y < 600 ? 5.0f : 7.0f);
  const panel::TimelineAction act =
      panel::draw_timeline(*src, at, replay.selected_request, ImVec2(w, plot_h), tree_counts());
  if (act.request >= 0)
    replay_jump(size_t(act.request), now);
  else if (act.seek)
    replay.seek(act.seq);

  // The slider says where the cursor is and shares its row with the speed
  // (the search is on the Request tab): the tree keeps half the panel.
  static constexpr double kSpeeds[] = {10, 50, 200, 1000, 5000, 20000};
  char speed[32];
  std::snprintf(speed, sizeof speed, "%.0f ev/s", replay.speed);
  const float speed_w = ImGui::GetFontSize() * 6;
  uint64_t slider = at;
  ImGui::SetNextItemWidth(std::max(w - speed_w - ImGui::GetStyle().ItemSpacing.x, speed_w));
  // The format is printf's: the total goes in as text (digits and commas).
  const std::string where = "event %llu of " + panel::thousands(int64_t(end));
  if (ImGui::SliderScalar("##scrub", ImGuiDataType_U64, &slider, &first, &end, where.c_str()))
    replay.seek(slider);
  flow(speed_w);
  ImGui::SetNextItemWidth(panel::fit_width(speed_w));
  if (ImGui::BeginCombo("##speed", speed)) {
    for (double s : kSpeeds) {
      std::snprintf(speed, sizeof speed, "%.0f ev/s", s);
      if (ImGui::Selectable(speed, s == replay.speed)) replay.speed = s;
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) panel::tooltip("Play speed, in events per second");
  if (!replay.cursor().error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kWarn);
    ImGui::TextWrapped("No tree at this moment: %s", replay.cursor().error.c_str());
    ImGui::PopStyleColor();
  }
}

void CachePanelState::replay_jump(size_t index, double now) {
  replay.jump_request(index);
  if (!replay.source() || index >= replay.source()->requests().size()) return;
  // The request's prompt is highlighted on the tree it met: the cached part
  // of its path, and where it left the cache.
  tree.located_tokens = replay.source()->requests()[index].prompt;
  tree.relocate_soon();
  replay_select_located_ = true;
  (void)now;
}

bool CachePanelState::replay_step_request(int dir, double now) {
  const int before = replay.selected_request;
  if (!replay.step_request(dir)) return false;
  const int after = replay.selected_request;
  replay.selected_request = before;
  replay_jump(size_t(after), now);
  return true;
}

// A node of the shown tree whose text holds `text` (the next after the
// selected one), else the next request whose prompt holds it.
bool CachePanelState::replay_find(const std::string& text, double now) {
  std::vector<NodeId> ids;
  for (const auto& [id, n] : tree.model.nodes())
    if (id != kRootNode && tree.label(n).full.find(text) != std::string::npos) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  if (!ids.empty()) {
    auto it = std::upper_bound(ids.begin(), ids.end(), tree.selected);
    const NodeId id = it == ids.end() ? ids.front() : *it;
    tree.select(id);
    tree.view.focus(id);
    tree.view.follow = false;
    find_result = panel::plural(int64_t(ids.size()), "node") + " hold it here";
    return true;
  }
  panel::RecordingSource* src = replay.source();
  if (src) {
    const auto& reqs = src->requests();
    const size_t n = reqs.size();
    const size_t start = replay.selected_request >= 0 ? size_t(replay.selected_request) + 1 : 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (start + k) % n;
      if (src->detokenize(reqs[i].prompt).find(text) == std::string::npos) continue;
      replay_jump(i, now);
      find_result = "not in this tree; request " + std::to_string(reqs[i].id) + "'s prompt has it";
      return true;
    }
  }
  find_result = "not found";
  return false;
}

// After a sync: a far jump fits the view to the tree there (following the
// newest growth suits play and small steps, not a different moment); the
// jumped-to request's path is selected once it is built.
void CachePanelState::replay_after_sync() {
  constexpr uint64_t kFitJump = 8;
  const uint64_t at = replay.cursor().applied, seen = replay_seen_seq_;
  replay_seen_seq_ = at;
  if (!replay.playing && !replay_select_located_ && seen != UINT64_MAX &&
      (at > seen + kFitJump || at + kFitJump < seen))
    tree.view.request_fit();
  if (!replay_select_located_ || replay.cursor().applied != replay.cursor().target) return;
  replay_select_located_ = false;
  const NodeId target = tree.located_partial != kNoNode ? tree.located_partial : tree.located;
  if (target == kNoNode) return;
  tree.select(target);
  tree.view.focus(target);
  tree.view.follow = false;
}

// The search over the shown tree's nodes and the recording's prompts.
void CachePanelState::draw_find_row(double now) {
  const float find_w = ImGui::GetFontSize() * 12;
  ImGui::SetNextItemWidth(
      std::max(std::min(find_w, ImGui::GetContentRegionAvail().x - button_w("Find") -
                                    ImGui::GetStyle().ItemSpacing.x),
               60.0f));
  const bool enter =
      ImGui::InputTextWithHint("##find", "text in a node or prompt", find_buf_, sizeof find_buf_,
                               ImGuiInputTextFlags_EnterReturnsTrue);
  flow(button_w("Find"));
  if ((ImGui::Button("Find") || enter) && find_buf_[0]) replay_find(find_buf_, now);
  if (!find_result.empty()) panel::flow_text(find_result.c_str(), true);
}

// The search, the requests, and why the selected one matched less than its
// prompt.
void CachePanelState::draw_request_tab(double now) {
  panel::RecordingSource* src = replay.source();
  if (!src) return;
  draw_find_row(now);
  const auto& reqs = src->requests();
  // A few rows: the explanation below is what the tab is for.
  const float fs = ImGui::GetFontSize();
  const float room = ImGui::GetContentRegionAvail().y;
  const float list_h = std::min(std::clamp(room * 0.35f, fs * 3.5f, fs * 6.5f), room);
  ImGui::BeginChild("##requests", ImVec2(0, list_h), true);
  ImGuiListClipper clip;
  clip.Begin(int(reqs.size()));
  while (clip.Step()) {
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const panel::RecordedRequest& r = reqs[size_t(i)];
      char row[160];
      std::snprintf(row, sizeof row, "#%llu  event %s  %s/%s tok cached  %s##req%d",
                    (unsigned long long)r.id, panel::thousands(int64_t(r.seq)).c_str(),
                    panel::thousands(std::max<int64_t>(r.matched_tokens, 0)).c_str(),
                    panel::thousands(r.prompt_tokens).c_str(),
                    r.finish.empty() ? "unfinished" : r.finish.c_str(), i);
      if (ImGui::Selectable(row, i == replay.selected_request)) replay_jump(size_t(i), now);
    }
  }
  ImGui::EndChild();
  if (replay.selected_request < 0) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("Pick a request (here, on the timeline, or with < req / req >).");
    ImGui::PopStyleColor();
    return;
  }
  const panel::MissView& m = replay.miss();
  const panel::RecordedRequest& r = reqs[size_t(replay.selected_request)];
  ImGui::Text("Why did request #%llu miss?", (unsigned long long)r.id);
  panel::draw_miss_view(m, "the tree before event " + panel::thousands(int64_t(m.at_seq)));
}

// The prompt-layout advisor over the whole recording.
void CachePanelState::draw_advisor_tab(double /*now*/) {
  const auto& lines = replay.advisor();
  ImGui::BeginChild("##advisor", ImVec2(0, 0), false);
  ImGui::PushTextWrapPos(0);
  for (const std::string& l : lines) ImGui::TextUnformatted(l.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndChild();
}

}  // namespace rc::ui
