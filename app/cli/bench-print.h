// What `radixchat-cli bench` prints of its runs (bench-result.h): the JSON
// object per run, the plain table, the comparison with "off", the tier
// table, and which settings' replies differ from the reference run's.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench-result.h"

namespace rc::cli {

// `bench --json`'s keys (docs/cli.md).
nlohmann::json to_json(const BenchResult& r);
void print_table(const std::vector<BenchResult>& rs);

// The run with cache "off" (the reference replies), or null.
const BenchResult* find_off(const std::vector<BenchResult>& rs);
// Every cache setting must generate what "off" generated (greedy, fixed
// length): a cache hit must never change a reply. The settings that did not.
std::vector<std::string> settings_with_other_replies(const std::vector<BenchResult>& rs);
// Each setting against "off": TTFT and throughput gains and the bound the
// hit rate predicts. Nothing without an "off" run.
void print_comparison(const std::vector<BenchResult>& rs);

// Each tier setting's run must generate what the first one generated: a
// block loaded from a tier must never change a reply. The settings that did not.
std::vector<std::string> tiers_with_other_replies(const std::vector<BenchResult>& rs);
void print_tier_table(const std::vector<BenchResult>& rs);

}  // namespace rc::cli
