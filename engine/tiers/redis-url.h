// `redis://[:password@]host[:port][/db]` for the shared tier (redis-store.h).
// The port defaults to 6379 and the database to 0. A URL without a password
// takes $RADIXCHAT_REDIS_PASSWORD when it is set (a command line is visible
// to every user in ps; the environment is not). hiredis 0.14 as Debian
// builds it has no TLS, so `rediss://` is refused by name rather than
// connected in clear. Pure function; any thread.
#pragma once

#include <string>
#include <string_view>

#include "radixchat/status.h"

namespace rc::tiers {

struct RedisUrl {
  std::string host;
  int port = 6379;
  std::string password;  // empty: no AUTH
  int db = 0;
  // The URL with the password replaced by "***", for messages and logs.
  std::string redacted() const;
};

// invalid_argument with one line naming what is wrong.
Result<RedisUrl> parse_redis_url(std::string_view url);

}  // namespace rc::tiers
