// The recording's timeline: one axis of event seqs with the
// hit-rate and memory plots (and their labels' row) above it and a row of request markers below,
// the cursor across all three. Clicking or dragging moves the cursor; a
// click on a marker selects that request.
//
// GUI thread, inside an ImGui window; the timeline is one item.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <string>

#include "panel/recording-access.h"

namespace rc::ui::panel {

struct TimelineAction {
  bool seek = false;  // the user clicked or dragged: go to `seq`
  uint64_t seq = 0;
  int request = -1;  // a request marker was clicked (index into requests())
};

// `note`: a line drawn at the right end of the hit-rate plot (the shown
// tree's counts), cut to the room beside that plot's own label.
TimelineAction draw_timeline(RecordingSource& src, uint64_t cursor, int selected, ImVec2 size,
                             const std::string& note = {});

// Where the timeline draws its parts in a `size` box at `p0` with text
// `fs` pixels tall: one row of labels (the plots' values at the cursor, in
// their lines' colours) above both plots, so no label lies over a line; the
// request strip at the bottom. Pure.
struct TimelineRows {
  ImVec2 label0, label1;
  ImVec2 hit0, hit1;  // hit rate
  ImVec2 mem0, mem1;  // cached tokens
  ImVec2 strip0, strip1;
};
TimelineRows timeline_rows(ImVec2 p0, ImVec2 size, float fs);

// The cached-tokens label at the cursor: "cached 6 of 4,096 tokens" over a
// pool of `pool_tokens`; a recording that knows no pool (made from KV
// events) says what it knows: "cached 6 tokens (at most 10)". Pure.
std::string timeline_cached_label(int64_t cached, int64_t pool_tokens, int64_t peak);

// x of `seq` on an axis from x0 to x0 + w covering [first, end].
float timeline_x(uint64_t seq, uint64_t first, uint64_t end, float x0, float w);

}  // namespace rc::ui::panel
