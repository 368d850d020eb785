#include "recommended-sampling.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace rc::model {
namespace {

// A number in [lo, hi] under `key`, integer or float; empty otherwise.
std::optional<float> real_in(const GgufFile& f, const std::string& key, float lo, float hi) {
  if (!f.has(key)) return std::nullopt;
  Result<float> v = f.get_f32(key);
  if (!v.ok()) {
    Result<int64_t> i = f.get_i64(key);
    if (!i.ok()) return std::nullopt;
    v = static_cast<float>(*i);
  }
  if (!std::isfinite(*v) || *v < lo || *v > hi) return std::nullopt;
  return *v;
}

std::optional<int> count_in(const GgufFile& f, const std::string& key, int64_t lo, int64_t hi) {
  if (!f.has(key)) return std::nullopt;
  Result<int64_t> v = f.get_i64(key);
  if (!v.ok() || *v < lo || *v > hi) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace

RecommendedSampling read_recommended_sampling(const GgufFile& f) {
  const std::string p = "general.sampling.";
  RecommendedSampling s;
  s.temperature = real_in(f, p + "temp", 0.0f, 2.0f);
  s.top_k = count_in(f, p + "top_k", 0, 1 << 20);
  s.top_p = real_in(f, p + "top_p", 0.0f, 1.0f);
  s.min_p = real_in(f, p + "min_p", 0.0f, 1.0f);
  s.repetition_penalty = real_in(f, p + "penalty_repeat", 0.01f, 10.0f);
  s.repeat_last_n = count_in(f, p + "penalty_last_n", 0, 1 << 20);
  return s;
}

}  // namespace rc::model

namespace rc {

std::string describe_sampling(const RecommendedSampling& s) {
  std::string out;
  auto add = [&out](const char* name, const std::string& value) {
    if (!out.empty()) out += ", ";
    out += std::string(name) + " " + value;
  };
  auto real = [](float v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", static_cast<double>(v));
    return std::string(b);
  };
  if (s.temperature) add("temperature", real(*s.temperature));
  if (s.top_k) add("top-k", std::to_string(*s.top_k));
  if (s.top_p) add("top-p", real(*s.top_p));
  if (s.min_p) add("min-p", real(*s.min_p));
  if (s.repetition_penalty) add("repetition penalty", real(*s.repetition_penalty));
  if (s.repeat_last_n) add("repetition window", std::to_string(*s.repeat_last_n) + " tokens");
  return out;
}

}  // namespace rc
