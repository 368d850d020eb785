// Tidy tree layout (Reingold-Tilford, in Buchheim, Jünger and Leipert's
// linear-time form), drawn left to right: depth runs along x in columns,
// siblings stack along y. A parent sits centred on its children, subtrees
// are packed as close as their contours allow, and equal subtrees get equal
// shapes, so a shared prefix reads as one box with its branches fanned out.
//
// Generic over any tree of boxes (the panel's visible tree, or random trees
// in the property test). Iterative (explicit stacks): a 10,000-deep chain of
// turns must not overflow the stack. Pure logic, any thread.
#pragma once

#include <vector>

namespace rc::ui::panel {

struct TidyInput {
  // children[i]: indices of i's children, in drawing order (top to bottom).
  std::vector<std::vector<int>> children;
  std::vector<float> width;   // along x (depth axis)
  std::vector<float> height;  // along y (breadth axis)
  int root = 0;
};

struct TidyParams {
  float sibling_gap = 8;  // min y gap between boxes of one column
  float level_gap = 48;   // x gap between columns
};

struct Box {
  float x = 0, y = 0, w = 0, h = 0;  // top-left corner and size
  int depth = 0;
};

// One box per input node. Boxes of one depth share a column whose width is
// the widest box there; no two boxes overlap (gaps at least the params).
// The top-most box touches y = 0 and the root x = 0. Nodes unreachable from
// the root get a zero box.
std::vector<Box> tidy_layout(const TidyInput& in, const TidyParams& params);

}  // namespace rc::ui::panel
