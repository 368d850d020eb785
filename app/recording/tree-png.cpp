#include "recording/tree-png.h"

#include <QBuffer>
#include <QByteArray>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "radixchat/private-files.h"

namespace rc::recording {

namespace {

// QPainter needs a QGuiApplication for fonts. The CLI has none: make one on
// the offscreen platform, whatever DISPLAY says, and keep it for the
// process (Qt allows one per process).
// Qt's notes (XDG_RUNTIME_DIR unset, font fallbacks) would break the
// CLI's one-line output; failures come back as a Status instead.
void quiet(QtMsgType type, const QMessageLogContext&, const QString& msg) {
  if (type == QtCriticalMsg || type == QtFatalMsg)
    std::fprintf(stderr, "radixchat-cli: Qt: %s\n", msg.toLocal8Bit().constData());
}

void ensure_gui_app() {
  if (QCoreApplication::instance()) return;
  qInstallMessageHandler(quiet);
  qputenv("QT_QPA_PLATFORM", "offscreen");
  static int argc = 1;
  static char name[] = "radixchat-cli";
  static char* argv[] = {name, nullptr};
  static std::unique_ptr<QGuiApplication> app = std::make_unique<QGuiApplication>(argc, argv);
}

}  // namespace

Status svg_to_png(const std::string& svg, const std::string& path, const PngOptions& o,
                  PngInfo* info) {
  ensure_gui_app();
  QSvgRenderer renderer(QByteArray::fromStdString(svg));
  if (!renderer.isValid())
    return Status(StatusCode::invalid_argument, "Qt could not read the tree's SVG");
  const QSizeF size = renderer.viewBoxF().size();
  if (size.width() < 1 || size.height() < 1)
    return Status(StatusCode::invalid_argument, "the tree's SVG has no size");
  double scale = o.scale > 0 ? o.scale : 1.0;
  scale = std::min(scale, o.max_side / std::max(size.width(), size.height()));
  scale = std::min(scale, std::sqrt(o.max_pixels / (size.width() * size.height())));
  const int w = std::max(1, int(std::ceil(size.width() * scale)));
  const int h = std::max(1, int(std::ceil(size.height() * scale)));
  QImage image(w, h, QImage::Format_ARGB32_Premultiplied);
  if (image.isNull())
    return Status(StatusCode::invalid_argument,
                  "cannot allocate a " + std::to_string(w) + "x" + std::to_string(h) + " image");
  image.fill(Qt::white);
  {
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    renderer.render(&painter, QRectF(0, 0, w, h));
  }
  // Encoded in memory, then written through the owner-only helper: the
  // picture shows cached prompts.
  QByteArray png;
  QBuffer buffer(&png);
  if (!buffer.open(QIODevice::WriteOnly) || !image.save(&buffer, "PNG"))
    return Status(StatusCode::internal, "Qt could not encode the PNG");
  if (Status s = write_private_file(path, std::string_view(png.constData(), size_t(png.size())));
      !s.ok())
    return Status(StatusCode::not_found, "cannot write " + path + ": " + s.message());
  if (info) *info = {w, h, scale};
  return {};
}

}  // namespace rc::recording
