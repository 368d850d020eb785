#include "tiers/redis-url.h"

#include <charconv>
#include <cstdlib>

namespace rc::tiers {

namespace {

Status bad(std::string_view url, const std::string& why) {
  return Status(StatusCode::invalid_argument, "bad Redis URL '" + std::string(url.substr(0, 200)) +
                                                  "': " + why +
                                                  " (expected redis://[:password@]host:port[/db])");
}

bool parse_int(std::string_view s, int lo, int hi, int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= lo && out <= hi;
}

}  // namespace

std::string RedisUrl::redacted() const {
  return "redis://" + std::string(password.empty() ? "" : ":***@") + host + ":" +
         std::to_string(port) + "/" + std::to_string(db);
}

Result<RedisUrl> parse_redis_url(std::string_view url) {
  // Never echo a password back: from the '@' on only.
  const size_t at = url.rfind('@');
  const std::string shown = at == std::string_view::npos
                                ? std::string(url)
                                : "redis://:***" + std::string(url.substr(at));
  if (url.starts_with("rediss://"))
    return bad(shown, "TLS (rediss://) is not supported by this build's hiredis");
  if (!url.starts_with("redis://")) return bad(shown, "it must start with redis://");
  std::string_view rest = url.substr(8);
  RedisUrl out;
  if (size_t a = rest.rfind('@'); a != std::string_view::npos) {
    std::string_view auth = rest.substr(0, a);
    rest = rest.substr(a + 1);
    if (!auth.starts_with(':'))
      return bad(shown, "user names are not supported; give the password as :password@");
    out.password = std::string(auth.substr(1));
    if (out.password.empty()) return bad(shown, "empty password after ':'");
  }
  std::string_view hostport = rest;
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && !parse_int(db, 0, 65535, out.db))
      return bad(shown, "database '" + std::string(db) + "' is not a number");
  }
  std::string_view host = hostport;
  if (size_t colon = hostport.rfind(':'); colon != std::string_view::npos) {
    host = hostport.substr(0, colon);
    std::string_view port = hostport.substr(colon + 1);
    if (!parse_int(port, 1, 65535, out.port))
      return bad(shown, "port '" + std::string(port) + "' is not a number from 1 to 65535");
  }
  if (host.empty()) return bad(shown, "no host");
  if (out.password.empty()) {
    if (const char* env = std::getenv("RADIXCHAT_REDIS_PASSWORD"); env && *env) out.password = env;
  }
  if (host.find_first_of("[]?#") != std::string_view::npos)
    return bad(shown, "host '" + std::string(host) + "' is not a host name or IPv4 address");
  out.host = std::string(host);
  return out;
}

}  // namespace rc::tiers
