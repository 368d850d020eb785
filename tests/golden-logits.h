// The bundled model's golden data (assets/model/golden.json, written by the
// PyTorch training code from the shipped GGUF): per case the prompt tokens,
// the last position's logits and the greedy continuation. Shared by the CPU
// engine test and the GPU model test, with the two comparisons they make.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rc::testing {

struct GoldenLogits {
  std::string name;
  std::vector<int32_t> tokens;
  std::vector<float> logits;
  std::vector<int32_t> greedy;
};

inline std::vector<GoldenLogits> load_golden_logits() {
  std::ifstream in(std::string(RADIXCHAT_SOURCE_DIR) + "/assets/model/golden.json");
  EXPECT_TRUE(in.good()) << "assets/model/golden.json is committed";
  if (!in.good()) return {};
  nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("version").get<int>(), 1);
  std::vector<GoldenLogits> out;
  for (const auto& c : j.at("cases")) {
    out.push_back({c.at("name"), c.at("tokens").get<std::vector<int32_t>>(),
                   c.at("last_logits").get<std::vector<float>>(),
                   c.at("greedy").get<std::vector<int32_t>>()});
  }
  return out;
}

// Largest elementwise difference; infinite when the sizes differ.
inline float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  float d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

inline float value_range(const std::vector<float>& a) {
  if (a.empty()) return 0;
  auto [lo, hi] = std::minmax_element(a.begin(), a.end());
  return *hi - *lo;
}

}  // namespace rc::testing
