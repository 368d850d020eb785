// Redis URLs: the accepted forms, and one clear line for each mistake.
#include <gtest/gtest.h>

#include "tiers/redis-url.h"

namespace rc::tiers {
namespace {

TEST(RedisUrl, AcceptedForms) {
  Result<RedisUrl> a = parse_redis_url("redis://127.0.0.1:25001");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a.value().host, "127.0.0.1");
  EXPECT_EQ(a.value().port, 25001);
  EXPECT_EQ(a.value().password, "");
  EXPECT_EQ(a.value().db, 0);
  Result<RedisUrl> b = parse_redis_url("redis://:s3cr@t@cache.lan:6380/2");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b.value().host, "cache.lan");
  EXPECT_EQ(b.value().password, "s3cr@t");
  EXPECT_EQ(b.value().port, 6380);
  EXPECT_EQ(b.value().db, 2);
  EXPECT_EQ(b.value().redacted(), "redis://:***@cache.lan:6380/2");
  Result<RedisUrl> c = parse_redis_url("redis://localhost");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value().port, 6379);
}

TEST(RedisUrl, MistakesAreOneClearLine) {
  struct Case {
    const char* url;
    const char* says;
  } cases[] = {
      {"http://h:1", "must start with redis://"},
      {"rediss://h:1", "TLS"},
      {"redis://:1", "no host"},
      {"redis://h:0", "port '0'"},
      {"redis://h:70000", "port '70000'"},
      {"redis://h:abc", "port 'abc'"},
      {"redis://h:1/x", "database 'x'"},
      {"redis://user:pw@h:1", "user names are not supported"},
      {"redis://:@h:1", "empty password"},
      {"", "must start with redis://"},
  };
  for (const Case& c : cases) {
    Result<RedisUrl> r = parse_redis_url(c.url);
    ASSERT_FALSE(r.ok()) << c.url;
    EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  }
}

TEST(RedisUrl, ErrorsNeverShowThePassword) {
  Result<RedisUrl> r = parse_redis_url("redis://:hunter2@h:notaport");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find("hunter2"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace rc::tiers
