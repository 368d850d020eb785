// Marks on the tree's boxes that explain a cache miss, drawn by
// tree-view-marks.cpp and described in the Node tab by panel-marks.cpp:
//   look-alike  an amber corner and a "same text" tag on a node whose
//               sibling reads the same with other token ids (sibling-diff.h)
//   context cut a red outline and a "context cut: N messages dropped" tag
//               on the node where the prompt sent after a cut leaves the
//               cached path (context-cut.h)
// Their colours are used by nothing else, so a test can find them in the
// draw data.
#pragma once

#include <imgui.h>

#include "panel/context-cut.h"
#include "panel/sibling-diff.h"

namespace rc::ui::panel {

struct MarkColours {
  static constexpr ImU32 look_alike = IM_COL32(242, 168, 58, 255);
  static constexpr ImU32 context_cut = IM_COL32(228, 76, 62, 255);
  static constexpr ImU32 cut_banner = IM_COL32(112, 40, 36, 235);
};

}  // namespace rc::ui::panel
