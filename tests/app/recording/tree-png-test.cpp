// PNG export (recording/tree-png.h and `cache-export --format png`): the
// file decodes (QImage, an independent PNG reader), has the SVG's size, and
// every node box is really painted: pixels of a box's fill colour add up to
// about one box interior per node of that colour, so a blank or
// half-rendered image fails. Two recorded moments give different pictures.
#include <gtest/gtest.h>

#include <QColor>
#include <QImage>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

#include "recording/block-recording.h"
#include "recording/recording-reader.h"
#include "recording/tree-png.h"
#include "recording/tree-svg.h"
#include "test-paths.h"

namespace rc::recording {
namespace {

namespace fs = std::filesystem;

const std::string kCli = RADIXCHAT_BINARY_DIR "/app/radixchat-cli";
// tree-svg.cpp's fills: plain, locked; its box is 180 x 20 with a stroke.
const QRgb kPlain = qRgb(0xe8, 0xf3, 0xe8), kLocked = qRgb(0xff, 0xd9, 0xa8);
constexpr int kBoxArea = 180 * 20;

std::string temp_path(const std::string& name) { return rc::test::temp_path("rc-png", name); }

int count(const QImage& img, QRgb colour) {
  int n = 0;
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) n += (img.pixel(x, y) & 0xffffff) == (colour & 0xffffff);
  return n;
}

// Labels and borders cover part of each box: at least 40% of it stays fill.
void expect_boxes(const QImage& img, QRgb colour, int boxes, const std::string& what) {
  const int n = count(img, colour);
  EXPECT_GE(n, boxes * kBoxArea * 4 / 10) << what;
  EXPECT_LE(n, boxes * kBoxArea) << what;
}

CacheNodeInfo node(NodeId id, NodeId parent, int tokens, uint32_t lock = 0) {
  CacheNodeInfo n;
  n.id = id;
  n.parent = parent;
  n.tokens.assign(size_t(tokens), 7);
  n.lock_ref = lock;
  return n;
}

TEST(TreePng, DecodesAtTheSvgSizeWithEveryBoxPainted) {
  CacheSnapshot s;
  s.nodes = {node(0, kNoNode, 0), node(1, 0, 12), node(2, 1, 5),
             node(3, 1, 9, 1),    node(4, 0, 3),  node(5, 4, 30, 2)};
  size_t drawn = 0;
  const std::string svg = tree_svg(s, nullptr, {}, &drawn);
  ASSERT_EQ(drawn, 6u);
  const std::string png = temp_path("unit.png");
  PngInfo info;
  ASSERT_TRUE(svg_to_png(svg, png, {}, &info).ok());
  QImage img(QString::fromStdString(png));
  ASSERT_FALSE(img.isNull());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("width=\"(\\d+)\" height=\"(\\d+)\"")));
  EXPECT_EQ(img.width(), std::stoi(m[1]));
  EXPECT_EQ(img.height(), std::stoi(m[2]));
  EXPECT_EQ(info.width, img.width());
  expect_boxes(img, kPlain, 4, "root and three unlocked nodes");
  expect_boxes(img, kLocked, 2, "two locked nodes");
  fs::remove(png);
}

TEST(TreePng, RefusesWhatIsNotSvgAndUnwritablePaths) {
  EXPECT_FALSE(svg_to_png("not an svg", temp_path("x.png")).ok());
  CacheSnapshot s;
  s.nodes = {node(0, kNoNode, 0)};
  EXPECT_FALSE(svg_to_png(tree_svg(s, nullptr), "/nonexistent-dir/x.png").ok());
}

TEST(TreePng, HugeTreesAreScaledDown) {
  CacheSnapshot s;
  s.nodes = {node(0, kNoNode, 0)};
  for (NodeId i = 1; i <= 3000; ++i) s.nodes.push_back(node(i, 0, 4));
  PngOptions o;
  o.max_side = 4096;
  PngInfo info;
  const std::string png = temp_path("huge.png");
  ASSERT_TRUE(svg_to_png(tree_svg(s, nullptr), png, o, &info).ok());
  EXPECT_LE(std::max(info.width, info.height), 4096);
  EXPECT_LT(info.scale, 1.0);
  EXPECT_FALSE(QImage(QString::fromStdString(png)).isNull());
  fs::remove(png);
}

kv_events::Batch stored(std::vector<std::string> hashes, std::optional<std::string> parent) {
  kv_events::Batch b;
  kv_events::Event e;
  e.kind = kv_events::EventKind::stored;
  e.block_hashes = std::move(hashes);
  e.parent = std::move(parent);
  e.block_size = 4;
  for (size_t i = 0; i < 4 * e.block_hashes.size(); ++i) e.token_ids.push_back(int64_t(i));
  b.events.push_back(std::move(e));
  return b;
}

int run(const std::string& args) {
  return WEXITSTATUS(std::system((kCli + " " + args + " 2>/dev/null").c_str()));
}

TEST(TreePng, CliExportsTwoMomentsThatDiffer) {
  const std::string rec = temp_path("moments.db");
  uint64_t early = 0;
  {
    auto r = Recorder::create(rec, {});
    ASSERT_TRUE(r.ok());
    BlockRecording br(**r);
    br.apply(stored({"a", "b"}, std::nullopt));
    early = br.tree().next_seq();
    br.apply(stored({"c", "d"}, "a"));
    br.apply(stored({"e"}, std::nullopt));
    br.finish();
    ASSERT_TRUE((*r)->close().ok());
  }
  const std::string a = temp_path("early.png"), b = temp_path("late.png");
  ASSERT_EQ(run("cache-export " + rec + " --at " + std::to_string(early) + " --out " + a), 0);
  ASSERT_EQ(run("cache-export " + rec + " --format png --out " + b), 0);
  QImage ia(QString::fromStdString(a)), ib(QString::fromStdString(b));
  ASSERT_FALSE(ia.isNull());
  ASSERT_FALSE(ib.isNull());
  expect_boxes(ia, kPlain, 3, "root and two blocks");
  expect_boxes(ib, kPlain, 6, "root and five blocks");
  EXPECT_NE(ia, ib);
  // Bad input: one clear error, no file.
  const std::string c = temp_path("nope.png");
  EXPECT_EQ(run("cache-export " + rec + " --at 999999 --out " + c), 1);
  EXPECT_EQ(run("cache-export " + rec + " --out " + temp_path("tree.gif")), 1);
  EXPECT_FALSE(fs::exists(c));
  for (const auto& f : {rec, a, b}) fs::remove(f);
}

}  // namespace
}  // namespace rc::recording
