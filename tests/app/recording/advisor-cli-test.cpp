// The prompt-layout advisor against a rerun: a bench workload with a span
// planted in the system prompt is recorded; cache-report's estimate of the
// tokens that moving the span saves must match what the same workload with
// the span moved to the user message really saves (within 1%).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "recording/recording-reader.h"
#include "test-paths.h"

namespace {

namespace fs = std::filesystem;

const std::string kCli = RADIXCHAT_BINARY_DIR "/app/radixchat-cli";

std::string run(const std::string& args) {
  std::string out;
  FILE* p = popen((kCli + " " + args).c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << args;
  return out;
}

std::string temp_path(const std::string& name) { return rc::test::temp_path("rc-adv", name); }

// One client: the engine matches requests in order, as the what-if does.
nlohmann::json bench(const std::string& where, const std::string& record) {
  return nlohmann::json::parse(run("bench --workload shared-system --planted-span " + where +
                                   " --requests 8 --concurrency 1 --max-tokens 2 --threads 2 "
                                   "--json --record " +
                                   record));
}

TEST(LayoutAdvisor, FindsThePlantedSpanAndItsSavingMatchesARerun) {
  const std::string in_system = temp_path("system.db"), in_user = temp_path("user.db");
  const nlohmann::json a = bench("system", in_system);
  const nlohmann::json b = bench("user", in_user);
  ASSERT_EQ(a["prompt_tokens"], b["prompt_tokens"]);  // the same tokens, moved
  const int64_t measured = b["cached_tokens"].get<int64_t>() - a["cached_tokens"].get<int64_t>();
  ASSERT_GT(measured, 1000);

  const nlohmann::json rep = nlohmann::json::parse(run("cache-report --json " + in_system));
  EXPECT_EQ(rep["matched_tokens"], a["cached_tokens"]);
  EXPECT_EQ(rep["sim_hit_tokens"], rep["matched_tokens"]);  // the what-if replays the run
  ASSERT_FALSE(rep["findings"].empty());
  const nlohmann::json& f = rep["findings"][0];
  // The span sits right after the system prompt's first line; its text is
  // five of the planted words.
  EXPECT_NE(f["before_text"].get<std::string>().find("travel company.\\n"), std::string::npos)
      << f["before_text"];
  EXPECT_EQ(f["requests_moved"], 8);
  const int64_t estimate = f["tokens_saved"].get<int64_t>();
  EXPECT_NEAR(double(estimate), double(measured), 0.01 * double(measured))
      << "estimate " << estimate << " measured " << measured;
  // Every request but the first missed at the span and is explained there.
  int at_span = 0;
  for (const auto& m : rep["misses"])
    if (m["divergence"] == f["position"] && m["realigned"] == true) ++at_span;
  EXPECT_GE(at_span, 5);

  // The fixed layout leaves nothing to advise about that span.
  const nlohmann::json fixed = nlohmann::json::parse(run("cache-report --json " + in_user));
  for (const auto& g : fixed["findings"])
    EXPECT_LT(g["tokens_saved"].get<int64_t>(), measured / 10);
  fs::remove(in_system);
  fs::remove(in_user);
}

TEST(LayoutAdvisor, ReportRefusesBadInputWithOneLine) {
  const std::string missing = temp_path("missing.db");
  FILE* p = popen((kCli + " cache-report " + missing + " 2>&1").c_str(), "r");
  char buf[512] = {0};
  const size_t n = fread(buf, 1, sizeof buf - 1, p);
  EXPECT_NE(pclose(p), 0);
  EXPECT_NE(std::string(buf, n).find("no recording at"), std::string::npos) << buf;
}

}  // namespace

namespace {

// Node elements of an SVG as Python's XML parser counts them (-1: not XML).
int svg_nodes(const std::string& path) {
  const std::string cmd =
      "python3 -c \"import sys, xml.etree.ElementTree as E; t = E.parse(sys.argv[1]); "
      "print(sum(1 for g in t.iter('{http://www.w3.org/2000/svg}g') if g.get('class') == "
      "'node'))\" " +
      path + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  int n = -1;
  if (fscanf(p, "%d", &n) != 1) n = -1;
  pclose(p);
  return n;
}

TEST(CacheExport, SvgIsXmlWithOneElementPerNodeAtTwoMoments) {
  const std::string rec = temp_path("export.db"), svg = temp_path("tree.svg");
  run("bench --workload multi-turn --requests 8 --concurrency 2 --max-tokens 4 --threads 2 "
      "--json --record " +
      rec);
  auto r = rc::recording::Recording::open(rec);
  ASSERT_TRUE(r.ok());
  const int64_t end = (*r)->summary().last_seq + 1;
  for (int64_t seq : {end / 2, end}) {
    auto tree = (*r)->tree_at(uint64_t(seq));
    ASSERT_TRUE(tree.ok()) << tree.status().message();
    run("cache-export " + rec + " --at " + std::to_string(seq) + " --format svg --out " + svg);
    EXPECT_EQ(svg_nodes(svg), int(tree->nodes.size())) << "at seq " << seq;
    ASSERT_GT(tree->nodes.size(), 1u);
  }
  fs::remove(rec);
  fs::remove(svg);
}

}  // namespace
