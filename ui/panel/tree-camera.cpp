// fit_camera (tree-view.h): where Fit puts the camera.
#include <algorithm>

#include "panel/tree-view.h"

namespace rc::ui::panel {

Camera fit_camera(ImVec2 tree, ImVec2 root, const FitArea& area) {
  const float aw = std::max(area.size.x - area.left - area.right, 1.0f);
  const float ah = std::max(area.size.y - area.top - area.bottom, 1.0f);
  const float zx = aw / std::max(tree.x, 1.0f), zy = ah / std::max(tree.y, 1.0f);
  const float z = std::clamp(std::min(zx, zy), kReadableZoom, 1.25f);
  // The world coordinate at the free area's start along one axis, then the
  // camera's (the canvas edge, `lead` pixels before it).
  auto axis = [z](float extent, float view_px, float root_c, float lead) {
    const float view = view_px / z;
    const float start = extent <= view ? (extent - view) * 0.5f
                                       : std::clamp(root_c - view * 0.5f, 0.0f, extent - view);
    return start - lead / z;
  };
  return Camera{axis(tree.x, aw, root.x, area.left), axis(tree.y, ah, root.y, area.top), z};
}

}  // namespace rc::ui::panel
