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

std::string timeline_cached_label(int64_t cached, int64_t pool_tokens, int64_t peak) {
  if (pool_tokens > 0)
    return "cached " + thousands(cached) + " of " + thousands(std::max(pool_tokens, peak)) +
           " tokens";
  return "cached " + plural(cached, "token") + " (at most " + thousands(peak) + ")";
}

TimelineRows timeline_rows(ImVec2 p0, ImVec2 size, float fs) {
  TimelineRows r;
  const float strip_h = std::max(fs * 1.2f, 12.0f), gap = 3, label_h = fs + 2;
  const float plot_h = std::max((size.y - label_h - strip_h - 2 * gap) / 2, 6.0f);
  const float x1 = p0.x + size.x;
  float y = p0.y;
  auto row = [&](ImVec2& a, ImVec2& b, float h) {
    a = ImVec2(p0.x, y);
    b = ImVec2(x1, y + h);
    y += h;
  };
  row(r.label0, r.label1, label_h);
  row(r.hit0, r.hit1, plot_h);
  y += gap;
  row(r.mem0, r.mem1, plot_h);
  y += gap;
  row(r.strip0, r.strip1, strip_h);
  return r;
}

namespace {

// One line plot over the seq axis in [p0, p1] (on the canvas colour the
// caller filled); `top` is the value at the top edge.
void plot_line(ImDrawList* dl, const std::vector<TimelineSample>& s,
               double (*value)(const TimelineSample&), double top, uint64_t first, uint64_t end,
               ImVec2 p0, ImVec2 p1, ImU32 colour) {
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
  const float x0 = p0.x, w = size.x;
  const auto& samples = src.samples();
  int64_t top_tokens = src.total_pages() * src.page_size();
  for (const TimelineSample& t : samples) top_tokens = std::max(top_tokens, t.cached_tokens);

  // The two plots, and above them their values at the cursor in their
  // lines' colours.
  const TimelineRows rows = timeline_rows(p0, size, fs);
  dl->AddRectFilled(rows.hit0, rows.hit1, Palette::canvas, 3.0f);
  dl->AddRectFilled(rows.mem0, rows.mem1, Palette::canvas, 3.0f);
  plot_line(dl, samples, hit_value, 1.0, first, end, rows.hit0, rows.hit1, Palette::inserted);
  plot_line(dl, samples, tokens_value, double(top_tokens), first, end, rows.mem0, rows.mem1,
            Palette::hot);
  const TimelineSample* at = sample_at(samples, cursor);
  char hit[48], mem[96];
  std::snprintf(hit, sizeof hit, "hit rate %.0f%%", at ? 100.0 * at->hit_rate : 0.0);
  std::snprintf(mem, sizeof mem, "%s",
                timeline_cached_label(at ? at->cached_tokens : 0,
                                      src.total_pages() * src.page_size(), top_tokens)
                    .c_str());
  const float ly = rows.label0.y + 1, sep = fs;
  dl->AddText(ImVec2(x0 + 2, ly), Palette::inserted, hit);
  const float mem_x = x0 + 2 + ImGui::CalcTextSize(hit).x + sep;
  dl->PushClipRect(rows.label0, rows.label1, true);  // a narrow panel cuts the cached count
  dl->AddText(ImVec2(mem_x, ly), Palette::hot, mem);
  dl->PopClipRect();
  if (!note.empty()) {
    const float room = x0 + w - (mem_x + ImGui::CalcTextSize(mem).x + sep) - 2;
    const std::string cut = fit_text(ImGui::GetFont(), fs, note, room);
    if (room > fs * 3)
      dl->AddText(ImVec2(x0 + w - 2 - ImGui::CalcTextSize(cut.c_str()).x, ly), Palette::text_dim,
                  cut.c_str());
  }

  // The axis: request markers, coloured by how much of the prompt was cached.
  const ImVec2 s0 = rows.strip0, s1 = rows.strip1;
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
