// The exported tree's labels (recording/tree-svg.h): no box is blank. The
// start-of-sequence token, whitespace-only nodes and tokens that print
// nothing get visible glyphs, template tokens their marks, and every box
// shows its token count.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "recording/tree-svg.h"

namespace rc::recording {
namespace {

CacheNodeInfo node(NodeId id, NodeId parent, std::vector<int32_t> tokens) {
  CacheNodeInfo n;
  n.id = id;
  n.parent = parent;
  n.tokens = std::move(tokens);
  return n;
}

// Each node's label and count, by id, read back from the document.
std::map<NodeId, std::pair<std::string, std::string>> labels(const std::string& svg) {
  std::map<NodeId, std::pair<std::string, std::string>> out;
  const std::regex g(
      "<g class=\"node\" data-id=\"(\\d+)\"[^>]*>.*?<text [^>]*>([^<]*)</text>"
      "(?:<text class=\"count\"[^>]*>(\\d+)</text>)?");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), g); it != std::sregex_iterator();
       ++it)
    out[NodeId(std::stoul((*it)[1]))] = {(*it)[2], (*it)[3]};
  return out;
}

TEST(TreeSvg, SpecialAndWhitespaceNodesHaveVisibleLabelsAndCounts) {
  // 1: BOS, 10: "Hello", 11: " ", 12: "\n", 13: a control token printing
  // nothing, 14 and 15: template tokens spelled out.
  const std::map<int32_t, std::string> vocab = {
      {1, ""}, {10, "Hello"}, {11, " "}, {12, "\n"}, {13, ""}, {14, "<|end|>"}, {15, "<|user|>"}};
  auto text = [&](const std::vector<int32_t>& t) {
    std::string s;
    for (int32_t id : t) s += vocab.at(id);
    return s;
  };
  CacheSnapshot s;
  s.nodes = {node(0, kNoNode, {}), node(1, 0, {1}),          node(2, 1, {10, 12, 10}),
             node(3, 1, {11, 11}), node(4, 1, {12, 12, 12}), node(5, 1, {13}),
             node(6, 0, {1, 10}),  node(7, 0, {14, 12, 15})};
  SvgOptions o;
  o.bos = 1;
  const auto got = labels(tree_svg(s, text, o));
  ASSERT_EQ(got.size(), 8u);
  EXPECT_EQ(got.at(0).first, "root");
  EXPECT_EQ(got.at(0).second, "") << "the root has no tokens to count";
  EXPECT_EQ(got.at(1).first, "BOS");
  EXPECT_EQ(got.at(2).first, "Hello\u21B5Hello");
  EXPECT_EQ(got.at(3).first, "\u2420\u2420");
  EXPECT_EQ(got.at(4).first, "\u21B5\u21B5\u21B5");
  EXPECT_EQ(got.at(5).first, "\u27E8special\u27E9");
  EXPECT_EQ(got.at(6).first, "BOS Hello");
  EXPECT_EQ(got.at(7).first, "\u23CE end\u21B5\u25B8user");
  const std::map<NodeId, std::string> counts = {{1, "1"}, {2, "3"}, {3, "2"}, {4, "3"},
                                                {5, "1"}, {6, "2"}, {7, "3"}};
  for (const auto& [id, n] : counts) EXPECT_EQ(got.at(id).second, n) << "node " << id;

  // Without a known BOS id it prints nothing, so it is a special token, not a blank.
  const auto plain = labels(tree_svg(s, text));
  EXPECT_EQ(plain.at(1).first, "\u27E8special\u27E9");
  EXPECT_EQ(plain.at(6).first, "Hello");
}

}  // namespace
}  // namespace rc::recording
