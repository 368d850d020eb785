// The cache tree's SVG (tree-svg.h) rasterized to PNG by Qt: QSvgRenderer
// paints the document onto a QImage, QImage writes the PNG. So the PNG is
// the SVG picture, not a second drawing that could disagree with it.
//
// Needs no display: when no Qt application exists yet, one is created on
// Qt's offscreen platform (fonts through fontconfig). Only built with the
// GUI (RADIXCHAT_GUI, Qt 6 Gui + Svg); radixchat-cli says so otherwise.
#pragma once

#include <string>

#include "radixchat/status.h"

namespace rc::recording {

struct PngOptions {
  double scale = 1.0;  // device pixels per SVG unit (1: the SVG's size)
  // A huge tree is scaled down so that neither side exceeds this and the
  // image stays within max_pixels; PngInfo::scale says what was used.
  int max_side = 16384;
  double max_pixels = 64e6;
};

struct PngInfo {
  int width = 0, height = 0;
  double scale = 1.0;
};

// Renders `svg` and writes it to `path`. invalid_argument when Qt cannot
// parse the document, not_found when the file cannot be written.
Status svg_to_png(const std::string& svg, const std::string& path, const PngOptions& options = {},
                  PngInfo* info = nullptr);

}  // namespace rc::recording
