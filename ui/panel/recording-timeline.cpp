// The recording timeline (recording-timeline.h).
#include "panel/recording-timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "panel/label-text.h"
#include "panel/panel-fit.h"
#include "panel/panel-style.h"
#include "panel/panel-widgets.h"

namespace rc::ui::panel {

float timeline_x(uint64_t seq, uint64_t first, uint64_t end, float x0, float w) {
  if (end <= first) return x0;
  const double f = double(std::clamp(seq, first, end) - first) / double(end - first);
  return x0 + float(f) * w;
}

namespace {

// One line plot over the seq axis; `top` is the value at the top edge.
void plot_line(ImDrawList* dl, const std::vector<TimelineSample>& s,
               double (*value)(const TimelineSample&), double top, uint64_t first, uint64_t end,
               ImVec2 p0, ImVec2 p1, ImU32 colour) {
  dl->AddRectFilled(p0, p1, Palette::canvas, 3.0f);
  const float h = p1.y - p0.y - 4;
  ImVec2 prev;
  bool have = false;
  for (const TimelineSample& t : s) {
    const double v = top > 0 ? std::clamp(value(t) / top, 0.0, 1.0) : 0.0;
    const ImVec2 q(timeline_x(t.seq, first, end, p0.x, p1.x - p0.x), p1.y - 2 - float(v) * h);
    if (have) dl->AddLine(prev, q, colour, 1.5f);
    prev = q;
    have = true;
  }
}

double hit_value(const TimelineSample& t) { return t.hit_rate; }
double tokens_value(const TimelineSample& t) { return double(t.cached_tokens); }

// The sample at or before `seq` (the first when none is).
const TimelineSample* sample_at(const std::vector<TimelineSample>& s, uint64_t seq) {
  if (s.empty()) return nullptr;
  auto it = std::upper_bound(s.begin(), s.end(), seq,
                             [](uint64_t v, const TimelineSample& t) { return v < t.seq; });
  return it == s.begin() ? &s.front() : &*(it - 1);
}

}  // namespace

TimelineAction draw_timeline(RecordingSource& src, uint64_t cursor, int selected, ImVec2 size,
                             const std::string& note) {
  TimelineAction act;
  const uint64_t first = src.first_seq(), end = std::max(src.end_seq(), first + 1);
  const float fs = ImGui::GetFontSize();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##timeline", size);
  const bool hovered = ImGui::IsItemHovered(), active = ImGui::IsItemActive();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float strip_h = std::max(fs * 1.2f, 12.0f), gap = 3;
  const float plot_h = std::max((size.y - strip_h - 2 * gap) / 2, 8.0f);
  const float x0 = p0.x, w = size.x;
  const auto& samples = src.samples();
  int64_t top_tokens = src.total_pages() * src.page_size();
  for (const TimelineSample& t : samples) top_tokens = std::max(top_tokens, t.cached_tokens);

  // The two plots, each labelled with its value at the cursor.
  const ImVec2 a0 = p0, a1(x0 + w, p0.y + plot_h);
  const ImVec2 b0(x0, a1.y + gap), b1(x0 + w, b0.y + plot_h);
  plot_line(dl, samples, hit_value, 1.0, first, end, a0, a1, Palette::inserted);
  plot_line(dl, samples, tokens_value, double(top_tokens), first, end, b0, b1, Palette::hot);
  const TimelineSample* at = sample_at(samples, cursor);
  char buf[96];
  std::snprintf(buf, sizeof buf, "hit rate %.0f%%", at ? 100.0 * at->hit_rate : 0.0);
  dl->AddText(ImVec2(x0 + 4, a0.y + 1), Palette::text_dim, buf);
  if (!note.empty()) {
    const float room = w - ImGui::CalcTextSize(buf).x - 4 * 4;
    const std::string cut = fit_text(ImGui::GetFont(), fs, note, room);
    if (room > fs * 3)
      dl->AddText(ImVec2(x0 + w - 4 - ImGui::CalcTextSize(cut.c_str()).x, a0.y + 1),
                  Palette::text_dim, cut.c_str());
  }
  std::snprintf(buf, sizeof buf, "cached %s of %s tokens",
                thousands(at ? at->cached_tokens : 0).c_str(), thousands(top_tokens).c_str());
  dl->AddText(ImVec2(x0 + 4, b0.y + 1), Palette::text_dim, buf);

  // The axis: request markers, coloured by how much of the prompt was cached.
  const ImVec2 s0(x0, b1.y + gap), s1(x0 + w, s0.y + strip_h);
  dl->AddRectFilled(s0, s1, Palette::free_pages, 3.0f);
  const auto& reqs = src.requests();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int nearest = -1;
  float nearest_d = 5;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const RecordedRequest& r = reqs[i];
    const float x = timeline_x(r.seq, first, end, x0, w);
    const double f = r.prompt_tokens > 0 && r.matched_tokens >= 0
                         ? double(r.matched_tokens) / double(r.prompt_tokens)
                         : 0.0;
    const ImU32 c = r.matched_tokens < 0 ? Palette::edge
                    : f >= 0.5           ? Palette::inserted
                                         : Palette::locked;
    const bool sel = int(i) == selected;
    dl->AddLine(ImVec2(x, s0.y + (sel ? 0 : 3)), ImVec2(x, s1.y - (sel ? 0 : 3)),
                sel ? Palette::selected : c, sel ? 3.0f : 1.5f);
    const float d = std::fabs(mouse.x - x);
    if (mouse.y >= s0.y && mouse.y <= s1.y && d < nearest_d) {
      nearest_d = d;
      nearest = int(i);
    }
  }
  const float cx = timeline_x(cursor, first, end, x0, w);
  dl->AddLine(ImVec2(cx, p0.y), ImVec2(cx, s1.y), Palette::matched, 2.0f);

  if (hovered) {
    const double f = std::clamp(double(mouse.x - x0) / double(std::max(w, 1.0f)), 0.0, 1.0);
    const uint64_t seq = first + uint64_t(std::llround(f * double(end - first)));
    begin_tooltip();
    if (nearest >= 0) {
      const RecordedRequest& r = reqs[size_t(nearest)];
      ImGui::Text("request %llu at event %s: %s of %s prompt tokens cached",
                  (unsigned long long)r.id, thousands(int64_t(r.seq)).c_str(),
                  thousands(std::max<int64_t>(r.matched_tokens, 0)).c_str(),
                  thousands(r.prompt_tokens).c_str());
      ImGui::TextDisabled("click: jump to it");
    } else {
      ImGui::Text("event %s", thousands(int64_t(seq)).c_str());
      ImGui::TextDisabled("click or drag: show the tree there");
    }
    end_tooltip();
  }
  if (ImGui::IsItemClicked() && nearest >= 0) {
    act.request = nearest;
  } else if (active) {
    const double f = std::clamp(double(mouse.x - x0) / double(std::max(w, 1.0f)), 0.0, 1.0);
    act.seek = true;
    act.seq = first + uint64_t(std::llround(f * double(end - first)));
  }
  return act;
}

}  // namespace rc::ui::panel
