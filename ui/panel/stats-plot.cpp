#include "panel/stats-plot.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "panel/panel-style.h"

namespace rc::ui::panel {

namespace {

// "%g" with the unit, e.g. "50%", "120 tok", "1.5 ms".
std::string tick_label(float v, const char* unit) {
  char buf[48];
  const bool tight = unit[0] == '%';
  std::snprintf(buf, sizeof buf, "%g%s%s", double(v), tight || !unit[0] ? "" : " ", unit);
  return buf;
}

std::string ago_label(double seconds) {
  char buf[32];
  if (seconds < 0.5)
    return "now";
  else if (seconds < 120)
    std::snprintf(buf, sizeof buf, "-%.0f s", seconds);
  else
    std::snprintf(buf, sizeof buf, "-%.1f min", seconds / 60);
  return buf;
}

// A dashed vertical line: marks a change of source, not data.
void dashed_vline(ImDrawList* dl, float x, float y0, float y1, ImU32 col) {
  for (float y = y0; y < y1; y += 7) dl->AddLine(ImVec2(x, y), ImVec2(x, std::min(y + 4, y1)), col);
}

}  // namespace

float nice_ceiling(float v) {
  if (!(v > 0)) return 1;
  const float p = std::pow(10.0f, std::floor(std::log10(v)));
  for (float m : {1.0f, 2.0f, 5.0f, 10.0f})
    if (m * p >= v * 0.9999f) return m * p;
  return 10 * p;
}

void draw_time_plot(const char* id, const std::vector<double>& t, const std::vector<float>& y,
                    const std::vector<StatsHistory::Marker>& markers, const PlotSpec& spec,
                    ImVec2 size, double now) {
  size.x = std::max(size.x, 80.0f);
  size.y = std::max(size.y, 48.0f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* font = ImGui::GetFont();
  const float fs = ImGui::GetFontSize(), small = fs * 0.82f;
  const ImVec2 p0 = ImGui::GetCursorScreenPos(), p1(p0.x + size.x, p0.y + size.y);
  ImGui::InvisibleButton(id, size);
  const bool hovered = ImGui::IsItemHovered();
  const size_t n = std::min(t.size(), y.size());

  // Y range in shown units: fixed (percentages) or a round number above the max.
  float top = spec.fixed_top;
  if (top <= 0) {
    float mx = 0;
    for (size_t i = 0; i < n; ++i) mx = std::max(mx, y[i] * spec.scale);
    top = nice_ceiling(mx * 1.05f);
  }
  const std::string ticks[3] = {tick_label(0, spec.unit), tick_label(top / 2, spec.unit),
                                tick_label(top, spec.unit)};
  float label_w = 0;
  for (const std::string& s : ticks)
    label_w = std::max(label_w, font->CalcTextSizeA(small, FLT_MAX, 0, s.c_str()).x);

  // Title line, then the plot area with the y labels left, x labels below.
  char value[64] = "";
  if (n > 0) std::snprintf(value, sizeof value, spec.value, double(y[n - 1] * spec.scale));
  dl->AddText(font, fs, p0, Palette::text_dim, spec.title);
  const float title_w = font->CalcTextSizeA(fs, FLT_MAX, 0, spec.title).x;
  const ImVec4 clip(p0.x, p0.y, p1.x, p1.y);
  dl->AddText(font, fs, ImVec2(p0.x + title_w + 8, p0.y), Palette::text, value, nullptr, 0, &clip);
  const ImVec2 a0(p0.x + label_w + 6, p0.y + fs + 4), a1(p1.x - 4, p1.y - small - 3);
  if (a1.y - a0.y < 12) return;  // too small to plot: the title line says it
  dl->AddRectFilled(a0, a1, rgba(16, 18, 24, 200), 3.0f);
  for (int k = 0; k < 3; ++k) {
    const float yy = a1.y - (a1.y - a0.y) * float(k) / 2;
    dl->AddLine(ImVec2(a0.x, yy), ImVec2(a1.x, yy), k == 0 ? Palette::edge : Palette::grid);
    const ImVec2 ts = font->CalcTextSizeA(small, FLT_MAX, 0, ticks[k].c_str());
    dl->AddText(font, small, ImVec2(a0.x - 4 - ts.x, yy - ts.y * 0.5f), Palette::text_dim,
                ticks[k].c_str());
  }
  dl->AddLine(a0, ImVec2(a0.x, a1.y), Palette::edge);

  // X: seconds before now, at least a minute wide so a few points do not
  // stretch across the whole plot.
  const double span = std::max(60.0, n > 0 ? now - t[0] : 0.0);
  const double t0 = now - span;
  auto x_of = [&](double at) { return a0.x + float((at - t0) / span) * (a1.x - a0.x); };
  auto y_of = [&](float v) {
    return a1.y - std::clamp(v * spec.scale / top, 0.0f, 1.0f) * (a1.y - a0.y);
  };
  for (int k = 0; k < 3; ++k) {
    const std::string s = ago_label(span * (1.0 - k / 2.0));
    const ImVec2 ts = font->CalcTextSizeA(small, FLT_MAX, 0, s.c_str());
    const float x = k == 0 ? a0.x : k == 1 ? (a0.x + a1.x - ts.x) * 0.5f : a1.x - ts.x;
    dl->AddText(font, small, ImVec2(x, a1.y + 2), Palette::text_dim, s.c_str());
  }

  // Policy / pool changes.
  const ImVec4 area(a0.x, a0.y, a1.x, a1.y);
  for (const StatsHistory::Marker& m : markers) {
    if (m.at < t0) continue;
    const float x = x_of(m.at);
    dashed_vline(dl, x, a0.y, a1.y, Palette::held);
    // Right of the line, or left of it when the plot ends too soon.
    const float lw = font->CalcTextSizeA(small, FLT_MAX, 0, m.label.c_str()).x;
    const float lx = x + 3 + lw <= a1.x ? x + 3 : std::max(a0.x, x - 3 - lw);
    dl->AddText(font, small, ImVec2(lx, a0.y + 1), Palette::held, m.label.c_str(), nullptr, 0,
                &area);
  }

  // The series.
  std::vector<ImVec2> pts;
  pts.reserve(n);
  for (size_t i = 0; i < n; ++i) pts.emplace_back(x_of(t[i]), y_of(y[i]));
  dl->PushClipRect(a0, a1, true);
  if (pts.size() >= 2) dl->AddPolyline(pts.data(), int(pts.size()), Palette::hot, 0, 2.0f);
  if (pts.size() <= 24)
    for (const ImVec2& p : pts) dl->AddCircleFilled(p, 2.5f, Palette::hot);
  dl->PopClipRect();
  if (n == 0) {
    const char* none = "no points yet";
    const ImVec2 ts = ImGui::CalcTextSize(none);
    dl->AddText(ImVec2((a0.x + a1.x - ts.x) * 0.5f, (a0.y + a1.y - ts.y) * 0.5f), Palette::text_dim,
                none);
  }

  // The point nearest the mouse, with its value and age.
  if (hovered && n > 0) {
    const float mx = ImGui::GetIO().MousePos.x;
    size_t best = 0;
    for (size_t i = 1; i < n; ++i)
      if (std::fabs(pts[i].x - mx) < std::fabs(pts[best].x - mx)) best = i;
    dl->AddCircle(pts[best], 5.0f, Palette::text, 12, 1.5f);
    char v[64];
    std::snprintf(v, sizeof v, spec.value, double(y[best] * spec.scale));
    ImGui::SetTooltip("%s: %s (%s)", spec.title, v, ago_label(now - t[best]).c_str());
  }
}

}  // namespace rc::ui::panel
