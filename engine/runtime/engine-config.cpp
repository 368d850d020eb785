// The named settings of EngineConfig: one table per enum, read both ways
// (contract in radixchat/engine-config.h).
#include "radixchat/engine-config.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace rc {
namespace {

template <class E, size_t N>
using Names = std::array<std::pair<E, const char*>, N>;

constexpr Names<BackendSetting, 3> kBackends{{
    {BackendSetting::automatic, "auto"},
    {BackendSetting::cpu, "cpu"},
    {BackendSetting::cuda, "cuda"},
}};
constexpr Names<CacheSetting, 4> kCaches{{
    {CacheSetting::radix, "radix"},
    {CacheSetting::radix_page16, "radix-page16"},
    {CacheSetting::hash16, "hash16"},
    {CacheSetting::off, "off"},
}};
constexpr Names<KvType, 3> kKvTypes{{
    {KvType::f16, "f16"},
    {KvType::bf16, "bf16"},
    {KvType::f32, "f32"},
}};
constexpr Names<Eviction, 2> kEvictions{{
    {Eviction::lru, "lru"},
    {Eviction::gdsf, "gdsf"},
}};

constexpr Names<SpeculateSetting, 2> kSpeculate{{
    {SpeculateSetting::off, "off"},
    {SpeculateSetting::tree, "tree"},
}};

template <class E, size_t N>
const char* name_of(const Names<E, N>& names, E value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return "unknown";
}

template <class E, size_t N>
std::vector<std::string_view> all_names(const Names<E, N>& names) {
  std::vector<std::string_view> out;
  for (const auto& entry : names) out.push_back(entry.second);
  return out;
}

// "unknown cache 'x' (expected radix, radix-page16, hash16 or off)".
template <class E, size_t N>
Result<E> parse(const Names<E, N>& names, std::string_view what, std::string_view value) {
  for (const auto& [e, name] : names) {
    if (value == name) return e;
  }
  std::string expected;
  for (size_t i = 0; i < N; ++i) {
    expected += i == 0 ? "" : i + 1 == N ? " or " : ", ";
    expected += names[i].second;
  }
  return Status(
      StatusCode::invalid_argument,
      "unknown " + std::string(what) + " '" + std::string(value) + "' (expected " + expected + ")");
}

}  // namespace

const char* setting_name(BackendSetting s) { return name_of(kBackends, s); }
const char* setting_name(CacheSetting s) { return name_of(kCaches, s); }
const char* setting_name(KvType s) { return name_of(kKvTypes, s); }
const char* setting_name(SpeculateSetting s) { return name_of(kSpeculate, s); }
const char* setting_name(Eviction s) { return name_of(kEvictions, s); }

template <>
std::vector<std::string_view> setting_names<BackendSetting>() {
  return all_names(kBackends);
}
template <>
std::vector<std::string_view> setting_names<CacheSetting>() {
  return all_names(kCaches);
}
template <>
std::vector<std::string_view> setting_names<KvType>() {
  return all_names(kKvTypes);
}
template <>
std::vector<std::string_view> setting_names<SpeculateSetting>() {
  return all_names(kSpeculate);
}
template <>
std::vector<std::string_view> setting_names<Eviction>() {
  return all_names(kEvictions);
}

Result<BackendSetting> parse_backend_setting(std::string_view name) {
  return parse(kBackends, "backend", name);
}
Result<CacheSetting> parse_cache_setting(std::string_view name) {
  return parse(kCaches, "cache", name);
}
Result<KvType> parse_kv_type(std::string_view name) { return parse(kKvTypes, "KV type", name); }
Result<SpeculateSetting> parse_speculate_setting(std::string_view name) {
  return parse(kSpeculate, "speculate setting", name);
}
Result<Eviction> parse_eviction_setting(std::string_view name) {
  return parse(kEvictions, "eviction policy", name);
}

}  // namespace rc
