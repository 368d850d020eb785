// Lesson mode of the cache panel: demos in an isolated engine
// (lesson-engine.h), paced by hand or by the clock but never ahead of what
// the paused tree shows, with a card per step (matched, computed, TTFT, and
// what `off` would have computed). The Demos tab and the caption banner's
// text live here; panel-frame.cpp draws the banner box.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "panel/panel-fit.h"
#include "panel/panel-widgets.h"
#include "radixchat/engine.h"

namespace rc::ui {

namespace {

// Requests the engine has seen (a new one raises it by one, whatever
// state it is in): the user chatting while a lesson is shown.
uint64_t requests_seen(const Engine& e) {
  const EngineStats s = e.stats();
  return s.requests_finished + s.requests_running + s.requests_waiting;
}

// Tokens a step's prompt renders to on `e`; an earlier reply it quotes
// counts as its step's max_tokens (the longest it can be).
int64_t step_prompt_tokens(const Engine& e, const panel::DemoScenario& s, size_t i) {
  const panel::DemoStep& st = s.steps[i];
  std::vector<ChatMessage> m = st.messages;
  int64_t replies = 0;
  for (ChatMessage& c : m) {
    if (c.role == "assistant" && c.content.rfind("{reply:", 0) == 0) {
      const size_t k = size_t(std::stoi(c.content.substr(7)));
      replies += k < s.steps.size() ? s.steps[k].max_tokens : 0;
      c.content.clear();
    }
  }
  Result<std::vector<int32_t>> r = e.render_chat(m);
  return r.ok() ? int64_t(r->size()) + replies : -1;
}

std::string card_line(size_t step, const panel::DemoStepResult& r) {
  if (!r.error.empty()) return "Step " + std::to_string(step + 1) + " failed: " + r.error;
  const RequestMetrics& m = r.metrics;
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "Step %zu: %d tokens matched (cached) \xC2\xB7 %d computed \xC2\xB7 TTFT %.0f ms "
                "\xC2\xB7 off would compute %d",
                step + 1, m.cached_tokens, m.computed_tokens, m.ttft_ms, m.prompt_tokens);
  std::string line = buf;
  if (r.evicted_tokens > 0) line += " \xC2\xB7 " + std::to_string(r.evicted_tokens) + " evicted";
  // The tiers below the pool (a lesson with a disk tier): what went down and
  // what came back, as the engine counted it.
  if (r.tier_blocks_written > 0)
    line +=
        " \xC2\xB7 " + panel::plural(int64_t(r.tier_blocks_written), "block") + " written to disk";
  if (m.loaded_tokens > 0)
    line +=
        " \xC2\xB7 " + std::to_string(m.loaded_tokens) + " loaded from disk instead of computed";
  if (m.tier_recomputed > 0)
    line +=
        " \xC2\xB7 " + std::to_string(m.tier_recomputed) + " on disk but recomputed (faster here)";
  if (m.drafted_tokens > 0)
    line += " \xC2\xB7 " + std::to_string(m.drafted_tokens) + " drafted from the cache, " +
            std::to_string(m.accepted_tokens) + " kept";
  return line;
}

}  // namespace

bool CachePanelState::start_lesson(size_t scenario, double now) {
  const auto& all = panel::demo_scenarios();
  panel::CacheFeed* uf = user_feed();
  Engine* user = uf ? uf->engine() : nullptr;
  if (!user || scenario >= all.size()) return false;
  if (lesson_active() || lesson_shown()) end_lesson(now, "");
  lesson.error.clear();
  const panel::DemoScenario& s = all[scenario];
  const int64_t pool = panel::lesson_pool_tokens(
      scenario, lesson.pool_tokens, [&](size_t i) { return step_prompt_tokens(*user, s, i); });
  Result<CacheSetting> policy = parse_cache_setting(kCachePolicies[lesson.policy]);
  if (!policy.ok()) {
    lesson.error = policy.status().message();
    return false;
  }
  const EngineConfig config = panel::scenario_config(user->model_info(), s, *policy, pool);
  lesson.host.build(config, s.disk_tier);
  lesson.scenario = int(scenario);
  lesson.fitted = 0;
  lesson.user_requests_seen = requests_seen(*user);
  log.note("lesson: " + s.name + " in a fresh " + setting_name(config.cache) + " cache of " +
               std::to_string(pool) + " tokens" +
               (s.disk_tier ? " with a disk tier in " + lesson.host.temp_disk() : std::string()) +
               (s.speculate ? " and drafted decoding" : std::string()) +
               " (your own cache is untouched)",
           now);
  return true;
}

void CachePanelState::end_lesson(double now, const std::string& why) {
  lesson.demo.stop(lesson.host.engine());
  lesson.scenario = -1;
  // The user's feed comes back before the lesson engine it replaced goes,
  // and then the view the user left it in.
  if (lesson.user_feed) {
    source.paused = false;
    show_feed(std::move(lesson.user_feed), now, true);
    if (on_lesson_shown) on_lesson_shown(false);
  }
  lesson.host.release();
  if (!why.empty()) log.note("lesson: " + why, now);
}

bool CachePanelState::lesson_next(double now) {
  if (!lesson_shown() || !lesson.demo.can_advance()) return false;
  // What the paused tree still owes this step is shown first, so the new
  // caption starts on a tree that matches the old one's end.
  while (step_one(now)) {
  }
  return lesson.demo.next_step(now);
}

void CachePanelState::clear_cache(double now) {
  if (lesson_active()) {
    start_lesson(size_t(lesson.scenario), now);
    return;
  }
  panel::CacheFeed* uf = user_feed();
  if (!uf || !on_settings) return;
  log.note("clear cache: the engine restarts with the same settings and an empty cache", now);
  on_settings(uf->cache_setting(), uf->pool_tokens());
}

void CachePanelState::poll_lesson(double now) {
  if (lesson.scenario < 0) return;
  using State = panel::LessonEngine::State;
  if (lesson.host.state() == State::building) {
    const State s = lesson.host.poll();
    if (s == State::failed) {
      lesson.error = "The lesson could not start an engine: " + lesson.host.error();
      log.note(lesson.error, now);
      lesson.scenario = -1;
      lesson.host.release();
    } else if (s == State::ready) {
      const bool was_shown = lesson_shown();
      if (!lesson.user_feed) lesson.user_feed = std::move(source.feed);
      source.paused = false;
      // The lesson's tree is a fresh one (show_feed parks the user's): no
      // mark, fold or counter of the user's tree is in it.
      show_feed(panel::make_lesson_feed(*lesson.host.engine()), now, false);
      if (!was_shown && on_lesson_shown) on_lesson_shown(true);
      frame.select_tab = "Demos";  // Next step, Stop and the per-step table
      lesson.demo.start(size_t(lesson.scenario), lesson.host.engine(), now);
      // The tree gets more of the panel; a chain of turns reads top down.
      frame.bottom_frac = std::min(frame.bottom_frac, 0.34f);
      const int o = panel::demo_scenarios()[size_t(lesson.scenario)].orientation;
      if (o != 0) tree.orientation = o;
    }
    return;
  }
  if (!lesson_shown()) return;
  const bool hold = source.paused || !source.pending.empty();
  lesson.demo.poll(lesson.host.engine(), now, hold);
  // Each finished step, once on screen, is brought into view whole.
  size_t shown = 0;
  for (const panel::DemoStepResult& r : lesson.demo.results()) shown += r.finished ? 1 : 0;
  if (!hold && shown > lesson.fitted) {
    lesson.fitted = shown;
    tree.view.request_fit();
  }
  // The user chats again after the demo: their cache is what matters now.
  Engine* user = lesson.user_feed->engine();
  if (user && (lesson.demo.finished() || !lesson.demo.running()) &&
      requests_seen(*user) != lesson.user_requests_seen)
    end_lesson(now, "a chat request arrived: back to your own cache");
}

std::string CachePanelState::lesson_banner() {
  if (lesson.scenario < 0) return "";
  const panel::DemoScenario& s = panel::demo_scenarios()[size_t(lesson.scenario)];
  if (lesson.host.state() == panel::LessonEngine::State::building)
    return "Preparing a fresh " + std::string(setting_name(lesson.host.config().cache)) +
           " cache (" + std::to_string(lesson.host.config().kv_pool_tokens) + " tokens) for \"" +
           s.name + "\"; your own cache is untouched.";
  std::string text = lesson.demo.caption();
  const size_t k = lesson.demo.step();
  if (source.paused && (lesson.demo.in_flight() || !source.pending.empty())) {
    text += "\nPaused: " + panel::thousands(int64_t(source.pending.size())) +
            " events of this step still to show. Step shows the next one; Resume shows all.";
  } else if (!lesson.demo.finished() && lesson.demo.can_advance() &&
             (lesson.demo.by_hand || source.paused)) {
    text += "\nPress Next step to send " +
            std::string(lesson.demo.results()[k].finished ? "the next chat." : "this chat.");
  }
  // The card of the step on screen: its own once its events are all shown.
  const bool shown = !source.paused && source.pending.empty();
  const std::vector<panel::DemoStepResult>& r = lesson.demo.results();
  if (k < r.size() && r[k].finished && shown)
    text += "\n" + card_line(k, r[k]);
  else if (k > 0 && k - 1 < r.size() && r[k - 1].finished)
    text += "\n" + card_line(k - 1, r[k - 1]);
  return text;
}

// The per-step table: what each request matched and computed, against what
// `off` (no reuse) would have computed.
void CachePanelState::draw_lesson_steps() {
  const std::vector<panel::DemoStepResult>& r = lesson.demo.results();
  const bool tiers = !lesson.host.temp_disk().empty();
  const bool drafts = lesson.host.config().speculate != SpeculateSetting::off;
  if (r.empty() || !ImGui::BeginTable("##steps", 7 + (tiers ? 1 : 0) + (drafts ? 1 : 0),
                                      ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit))
    return;
  for (const char* h :
       {"step", "prompt", "matched", "computed", "TTFT ms", "off computes", "evicted"})
    ImGui::TableSetupColumn(h);
  if (tiers) ImGui::TableSetupColumn("loaded");
  if (drafts) ImGui::TableSetupColumn("kept/drafted");
  ImGui::TableHeadersRow();
  for (size_t i = 0; i < r.size(); ++i) {
    if (!r[i].finished) continue;
    const RequestMetrics& m = r[i].metrics;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%zu", i + 1);
    if (!r[i].error.empty()) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted("failed");
      continue;
    }
    ImGui::TableNextColumn();
    ImGui::Text("%d", m.prompt_tokens);
    ImGui::TableNextColumn();
    ImGui::Text("%d", m.cached_tokens);
    ImGui::TableNextColumn();
    ImGui::Text("%d", m.computed_tokens);
    ImGui::TableNextColumn();
    ImGui::Text("%.0f", m.ttft_ms);
    ImGui::TableNextColumn();
    ImGui::Text("%d", m.prompt_tokens);
    ImGui::TableNextColumn();
    ImGui::Text("%llu", (unsigned long long)r[i].evicted_tokens);
    if (tiers) {
      ImGui::TableNextColumn();
      ImGui::Text("%d", m.loaded_tokens);
    }
    if (drafts) {
      ImGui::TableNextColumn();
      ImGui::Text("%d/%d", m.accepted_tokens, m.drafted_tokens);
    }
  }
  ImGui::EndTable();
}

// Demos: Next step, Stop, Clear cache, the caption and the per-step table;
// then the lesson's cache and pace, and one button per scenario.
void CachePanelState::draw_demos_tab(double now) {
  panel::CacheFeed* uf = user_feed();
  rc::Engine* user = uf ? uf->engine() : nullptr;
  if (!user) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("Demos need a model: they send scripted chats to an engine.");
    ImGui::PopStyleColor();
  }
  // The lesson's own controls first: they stay in view in a short tab.
  ImGui::BeginDisabled(!lesson.demo.can_advance() || !lesson_shown());
  if (ImGui::Button("Next step")) lesson_next(now);
  frame.next_step_box = {"Next step", ImGui::GetItemRectMin(), ImGui::GetItemRectMax(),
                         ImGui::CalcTextSize("Next step").x, ImGui::IsItemVisible()};
  ImGui::EndDisabled();
  const char* stop = lesson.demo.finished() ? "Back to my cache" : "Stop demo";
  panel::flow(panel::button_w(stop));
  ImGui::BeginDisabled(!lesson_active());
  if (ImGui::Button(stop))
    end_lesson(
        now, lesson.demo.finished() ? "back to your own cache" : "stopped; back to your own cache");
  ImGui::EndDisabled();
  panel::flow(panel::button_w("Clear cache"));
  ImGui::BeginDisabled(!user || (!lesson_active() && !on_settings));
  if (ImGui::Button("Clear cache")) clear_cache(now);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered())
    panel::tooltip("%s", lesson_active() ? "Start this demo again in an empty cache"
                                         : "Restart the engine with an empty cache (same policy "
                                           "and pool; saved system prompts are cached again)");
  // Below the buttons everything scrolls in a child of its own, so the
  // buttons stay pinned however far the caption or the demo list goes.
  ImGui::BeginChild("##demos-body", ImVec2(0, 0), false);
  frame.region_lines = panel::window_lines();
  if (lesson_active()) {
    const double next = lesson.demo.seconds_to_next(now);
    if (next > 0 && !source.paused) {
      char in[32];
      std::snprintf(in, sizeof in, "next in %.0f s", next);
      panel::flow_text(in, true);
    }
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(lesson_banner().c_str());
    const std::string reply = lesson.demo.reply();
    if (!reply.empty()) ImGui::TextDisabled("model: %s", panel::one_line(reply, 200).c_str());
    ImGui::PopTextWrapPos();
    draw_lesson_steps();
  }
  ImGui::Separator();
  const float row = ImGui::GetContentRegionAvail().x;
  // Rows wrap (panel-widgets.h): the panel may be 320 px wide, or show
  // a projector's text scale.
  ImGui::Combo(panel::fit_labelled("demo cache", std::min(150.0f, row * 0.4f)).c_str(),
               &lesson.policy, kCachePolicies, 4);
  if (ImGui::IsItemHovered())
    panel::tooltip(
        "Demos run in a fresh cache of their own with this policy; yours stays as it is");
  panel::flow(panel::check_w("by hand"));
  ImGui::Checkbox("by hand", &lesson.demo.by_hand);
  if (ImGui::IsItemHovered()) panel::tooltip("Each chat waits for Next step");
  panel::flow(120 + ImGui::CalcTextSize("s per step").x);
  float pace = float(lesson.demo.seconds_per_step);
  if (ImGui::SliderFloat(panel::fit_labelled("s per step", 160).c_str(), &pace, 1.0f, 20.0f,
                         "%.0f s"))
    lesson.demo.seconds_per_step = pace;

  const auto& all = panel::demo_scenarios();
  const float bw = std::min(190.0f, row * 0.45f);
  for (size_t i = 0; i < all.size(); ++i) {
    ImGui::BeginDisabled(!user);
    ImGui::PushID(int(i));
    // Never narrower than its name ("Branch an old messag" was cut).
    const float name_w =
        ImGui::CalcTextSize(all[i].name.c_str()).x + 2 * ImGui::GetStyle().FramePadding.x;
    if (ImGui::Button(all[i].name.c_str(), ImVec2(std::min(row, std::max(bw, name_w)), 0)))
      start_lesson(i, now);
    ImGui::PopID();
    ImGui::EndDisabled();
    panel::flow_text(all[i].summary.c_str(), true,
                     std::min(ImGui::CalcTextSize(all[i].summary.c_str()).x, row * 0.4f));
  }
  if (!lesson.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.94f, 0.42f, 0.42f, 1));
    ImGui::TextWrapped("%s", lesson.error.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::EndChild();
}

}  // namespace rc::ui
