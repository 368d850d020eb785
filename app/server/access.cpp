#include "access.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace rc::server {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// "name:port", "[v6]:port", "name" or "[v6]" -> the name without brackets.
std::string strip_port(const std::string& host) {
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    return close == std::string::npos ? host : host.substr(1, close - 1);
  }
  const size_t colon = host.find(':');
  // More than one colon: a bare IPv6 address, no port.
  if (colon != std::string::npos && host.find(':', colon + 1) == std::string::npos) {
    return host.substr(0, colon);
  }
  return host;
}

}  // namespace

bool is_loopback_host(const std::string& host_in) {
  std::string host = lower(host_in);
  if (!host.empty() && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost" || host.ends_with(".localhost")) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    static const in6_addr loop = IN6ADDR_LOOPBACK_INIT;
    return std::memcmp(&v6, &loop, sizeof(v6)) == 0;
  }
  return false;
}

Status check_bind_address(const std::string& host, const std::string& api_key) {
  if (host.empty()) return Status(StatusCode::invalid_argument, "--host is empty");
  if (is_loopback_host(host) || !api_key.empty()) return Status();
  return Status(StatusCode::invalid_argument,
                "refusing to listen on '" + host +
                    "' without --api-key: a non-loopback address exposes the model and the "
                    "cached prompts of every user to the network. Pass --api-key KEY (clients "
                    "then send 'Authorization: Bearer KEY'), or keep the default --host 127.0.0.1");
}

bool bearer_authorized(const std::string& authorization, const std::string& api_key) {
  if (api_key.empty()) return true;
  static const std::string kScheme = "bearer ";
  if (authorization.size() < kScheme.size() ||
      lower(authorization.substr(0, kScheme.size())) != kScheme) {
    return false;
  }
  std::string given = authorization.substr(kScheme.size());
  while (!given.empty() && given.front() == ' ') given.erase(given.begin());
  while (!given.empty() && given.back() == ' ') given.pop_back();
  // Constant time in the key's content: the loop length depends only on
  // the sizes, so timing does not reveal how long a matching prefix is.
  unsigned char diff = given.size() == api_key.size() ? 0 : 1;
  const size_t n = std::max(given.size(), api_key.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char a = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    const unsigned char b = i < api_key.size() ? static_cast<unsigned char>(api_key[i]) : 0;
    diff |= static_cast<unsigned char>(a ^ b);
  }
  return diff == 0;
}

Status check_origin(const std::string& origin) {
  auto bad = [&](const std::string& why) {
    return Status(StatusCode::invalid_argument, "--allow-origin '" + origin.substr(0, 200) +
                                                    "': " + why +
                                                    " (expected e.g. https://app.example:8443)");
  };
  size_t scheme = 0;
  if (origin.starts_with("http://")) {
    scheme = 7;
  } else if (origin.starts_with("https://")) {
    scheme = 8;
  } else {
    return bad("an origin starts with http:// or https://");
  }
  const std::string host = origin.substr(scheme);
  if (host.empty()) return bad("no host");
  if (host.find_first_of("/?#*@ ") != std::string::npos) {
    return bad("an origin is a scheme, a host and a port only");
  }
  return Status();
}

bool host_header_allowed(const std::string& host_header, const std::string& bind_host) {
  if (host_header.empty()) return true;
  const std::string name = lower(strip_port(host_header));
  if (is_loopback_host(name)) return true;
  return name == lower(strip_port(bind_host));
}

}  // namespace rc::server
