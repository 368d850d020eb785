// EngineConfig's named settings (radixchat/engine-config.h): every name the
// CLI accepts reads back to its enum and out again, and a bad one fails in
// one sentence naming every spelling.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "radixchat/engine-config.h"

namespace rc {
namespace {

template <class E>
void expect_round_trip(Result<E> (*parse)(std::string_view),
                       const std::vector<std::string>& names) {
  EXPECT_EQ(setting_names<E>(), std::vector<std::string_view>(names.begin(), names.end()));
  for (const std::string& name : names) {
    Result<E> e = parse(name);
    ASSERT_TRUE(e.ok()) << name << ": " << e.status().to_string();
    EXPECT_EQ(setting_name(e.value()), name);
  }
}

TEST(EngineConfigSettings, EveryCliSpellingReadsBackToItsName) {
  expect_round_trip(parse_backend_setting, {"auto", "cpu", "cuda"});
  expect_round_trip(parse_cache_setting, {"radix", "radix-page16", "hash16", "off"});
  expect_round_trip(parse_kv_type, {"f16", "bf16", "f32"});
  expect_round_trip(parse_speculate_setting, {"off", "tree"});
  expect_round_trip(parse_eviction_setting, {"lru", "gdsf"});
  EXPECT_EQ(parse_cache_setting("radix-page16").value(), CacheSetting::radix_page16);
  EXPECT_EQ(parse_backend_setting("auto").value(), BackendSetting::automatic);
}

TEST(EngineConfigSettings, DefaultsAreTheDocumentedOnes) {
  const EngineConfig c;
  EXPECT_STREQ(setting_name(c.backend), "auto");
  EXPECT_STREQ(setting_name(c.cache), "radix");
  EXPECT_STREQ(setting_name(c.kv_type), "f16");
  EXPECT_STREQ(setting_name(c.speculate), "tree");
  EXPECT_STREQ(setting_name(c.eviction), "gdsf");
}

TEST(EngineConfigSettings, ABadNameIsOneSentenceNamingEveryChoice) {
  auto message = [](const Status& s) {
    EXPECT_EQ(s.code(), StatusCode::invalid_argument);
    return s.message();
  };
  EXPECT_EQ(message(parse_backend_setting("gpu").status()),
            "unknown backend 'gpu' (expected auto, cpu or cuda)");
  EXPECT_EQ(message(parse_cache_setting("Radix").status()),
            "unknown cache 'Radix' (expected radix, radix-page16, hash16 or off)");
  EXPECT_EQ(message(parse_kv_type("fp16").status()),
            "unknown KV type 'fp16' (expected f16, bf16 or f32)");
  EXPECT_EQ(message(parse_speculate_setting("").status()),
            "unknown speculate setting '' (expected off or tree)");
}

}  // namespace
}  // namespace rc
