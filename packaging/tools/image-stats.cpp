// image-stats FILE: prints "WIDTH HEIGHT COLOURS BACKGROUND_PERCENT" for an
// image, where BACKGROUND_PERCENT is the share of pixels that have the most
// common colour. check-deb.sh uses it to tell a drawn window from a blank
// one without ImageMagick. Exit 1 with one line when the file cannot be read.
#include <QColor>
#include <QImage>
#include <cstdio>
#include <unordered_map>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: image-stats FILE\n");
    return 2;
  }
  QImage image(QString::fromLocal8Bit(argv[1]));
  if (image.isNull()) {
    std::fprintf(stderr, "image-stats: cannot read %s as an image\n", argv[1]);
    return 1;
  }
  image = image.convertToFormat(QImage::Format_RGB32);
  std::unordered_map<QRgb, long long> counts;
  for (int y = 0; y < image.height(); ++y) {
    const QRgb* row = reinterpret_cast<const QRgb*>(image.constScanLine(y));
    for (int x = 0; x < image.width(); ++x) ++counts[row[x]];
  }
  long long top = 0;
  for (const auto& [colour, n] : counts) top = n > top ? n : top;
  const double pixels = double(image.width()) * image.height();
  std::printf("%d %d %zu %.2f\n", image.width(), image.height(), counts.size(),
              pixels > 0 ? 100.0 * double(top) / pixels : 100.0);
  return 0;
}
