#include "panel/tree-layout.h"

#include <algorithm>
#include <limits>

namespace rc::ui::panel {

namespace {

// Per-node state of Buchheim et al.'s algorithm; names follow the paper.
struct Walk {
  int parent = -1;
  int number = 0;  // 1-based position among siblings
  int thread = -1;
  int ancestor = -1;
  float prelim = 0, mod = 0, shift = 0, change = 0;
};

class Tidy {
 public:
  Tidy(const TidyInput& in, const TidyParams& p) : in_(in), p_(p), w_(in.children.size()) {
    for (size_t i = 0; i < w_.size(); ++i) w_[i].ancestor = int(i);
  }

  std::vector<Box> run() {
    std::vector<Box> out(w_.size());
    if (in_.root < 0 || size_t(in_.root) >= w_.size()) return out;
    first_walk();
    second_walk(out);
    return out;
  }

 private:
  const std::vector<int>& kids(int v) const { return in_.children[size_t(v)]; }
  bool leaf(int v) const { return kids(v).empty(); }
  int left_sibling(int v) const {
    const Walk& x = w_[size_t(v)];
    return x.parent < 0 || x.number <= 1 ? -1 : kids(x.parent)[size_t(x.number - 2)];
  }
  int leftmost_sibling(int v) const {
    const Walk& x = w_[size_t(v)];
    return x.parent < 0 ? -1 : kids(x.parent).front();
  }
  int next_left(int v) const { return leaf(v) ? w_[size_t(v)].thread : kids(v).front(); }
  int next_right(int v) const { return leaf(v) ? w_[size_t(v)].thread : kids(v).back(); }
  // Centre-to-centre distance two neighbours of one column need.
  float distance(int a, int b) const {
    return 0.5f * (in_.height[size_t(a)] + in_.height[size_t(b)]) + p_.sibling_gap;
  }

  void move_subtree(int wm, int wp, float shift) {
    Walk& m = w_[size_t(wm)];
    Walk& q = w_[size_t(wp)];
    const float subtrees = float(q.number - m.number);
    q.change -= shift / subtrees;
    q.shift += shift;
    m.change += shift / subtrees;
    q.prelim += shift;
    q.mod += shift;
  }

  void execute_shifts(int v) {
    float shift = 0, change = 0;
    const auto& c = kids(v);
    for (auto it = c.rbegin(); it != c.rend(); ++it) {
      Walk& w = w_[size_t(*it)];
      w.prelim += shift;
      w.mod += shift;
      change += w.change;
      shift += w.shift + change;
    }
  }

  int ancestor_of(int vim, int v, int default_ancestor) const {
    const int a = w_[size_t(vim)].ancestor;
    return w_[size_t(a)].parent == w_[size_t(v)].parent ? a : default_ancestor;
  }

  int apportion(int v, int default_ancestor) {
    const int w = left_sibling(v);
    if (w < 0) return default_ancestor;
    int vip = v, vop = v, vim = w, vom = leftmost_sibling(v);
    float sip = w_[size_t(vip)].mod, sop = w_[size_t(vop)].mod;
    float sim = w_[size_t(vim)].mod, som = w_[size_t(vom)].mod;
    while (next_right(vim) >= 0 && next_left(vip) >= 0) {
      vim = next_right(vim);
      vip = next_left(vip);
      vom = next_left(vom);
      vop = next_right(vop);
      w_[size_t(vop)].ancestor = v;
      const float shift =
          (w_[size_t(vim)].prelim + sim) - (w_[size_t(vip)].prelim + sip) + distance(vim, vip);
      if (shift > 0) {
        move_subtree(ancestor_of(vim, v, default_ancestor), v, shift);
        sip += shift;
        sop += shift;
      }
      sim += w_[size_t(vim)].mod;
      sip += w_[size_t(vip)].mod;
      som += w_[size_t(vom)].mod;
      sop += w_[size_t(vop)].mod;
    }
    if (next_right(vim) >= 0 && next_right(vop) < 0) {
      w_[size_t(vop)].thread = next_right(vim);
      w_[size_t(vop)].mod += sim - sop;
    }
    if (next_left(vip) >= 0 && next_left(vom) < 0) {
      w_[size_t(vom)].thread = next_left(vip);
      w_[size_t(vom)].mod += sip - som;
      default_ancestor = v;
    }
    return default_ancestor;
  }

  // Post-order with an explicit stack. A child's apportion must run right
  // after its own walk and before its next sibling's, as in the recursion.
  void first_walk() {
    struct Frame {
      int v;
      size_t next;
      int default_ancestor;
    };
    std::vector<Frame> stack;
    stack.push_back({in_.root, 0, -1});
    w_[size_t(in_.root)].number = 1;
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto& c = kids(f.v);
      if (f.next < c.size()) {
        const int child = c[f.next];
        if (f.next == 0) f.default_ancestor = child;
        w_[size_t(child)].parent = f.v;
        w_[size_t(child)].number = int(f.next) + 1;
        ++f.next;
        stack.push_back({child, 0, -1});
        continue;
      }
      const int v = f.v;
      Walk& x = w_[size_t(v)];
      const int ls = left_sibling(v);
      if (c.empty()) {
        x.prelim = ls >= 0 ? w_[size_t(ls)].prelim + distance(ls, v) : 0;
      } else {
        execute_shifts(v);
        const float mid = 0.5f * (w_[size_t(c.front())].prelim + w_[size_t(c.back())].prelim);
        if (ls >= 0) {
          x.prelim = w_[size_t(ls)].prelim + distance(ls, v);
          x.mod = x.prelim - mid;
        } else {
          x.prelim = mid;
        }
      }
      stack.pop_back();
      if (!stack.empty())
        stack.back().default_ancestor = apportion(v, stack.back().default_ancestor);
    }
  }

  void second_walk(std::vector<Box>& out) {
    // Column x positions from the widest box of each depth.
    std::vector<float> col_w;
    struct Item {
      int v;
      float m;
      int depth;
    };
    std::vector<Item> stack{{in_.root, -w_[size_t(in_.root)].prelim, 0}};
    std::vector<int> order;
    float min_top = std::numeric_limits<float>::max();
    while (!stack.empty()) {
      const Item it = stack.back();
      stack.pop_back();
      Box& b = out[size_t(it.v)];
      b.w = in_.width[size_t(it.v)];
      b.h = in_.height[size_t(it.v)];
      b.depth = it.depth;
      b.y = w_[size_t(it.v)].prelim + it.m - 0.5f * b.h;
      min_top = std::min(min_top, b.y);
      if (size_t(it.depth) >= col_w.size()) col_w.resize(size_t(it.depth) + 1, 0);
      col_w[size_t(it.depth)] = std::max(col_w[size_t(it.depth)], b.w);
      order.push_back(it.v);
      const float m = it.m + w_[size_t(it.v)].mod;
      for (int c : kids(it.v)) stack.push_back({c, m, it.depth + 1});
    }
    std::vector<float> col_x(col_w.size(), 0);
    for (size_t d = 1; d < col_w.size(); ++d) col_x[d] = col_x[d - 1] + col_w[d - 1] + p_.level_gap;
    for (int v : order) {
      Box& b = out[size_t(v)];
      b.x = col_x[size_t(b.depth)];
      b.y -= min_top;
    }
  }

  const TidyInput& in_;
  const TidyParams& p_;
  std::vector<Walk> w_;
};

}  // namespace

std::vector<Box> tidy_layout(const TidyInput& in, const TidyParams& params) {
  return Tidy(in, params).run();
}

}  // namespace rc::ui::panel
