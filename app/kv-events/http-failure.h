// Why an HTTP request to a server failed, in words a user can act on.
// cpp-httplib reports every failed connect as "Connection"; this connects
// once more itself to read the system's reason ("Connection refused",
// "No route to host", a DNS failure) and names the address it tried.
// Called on the thread that made the request, after it failed; blocks for
// at most `timeout_s` while connecting.
#pragma once

#include <httplib.h>

#include <string>

namespace rc::kv_events {

// `base_url`: "http://host[:port]" as given to httplib::Client.
std::string http_failure(const std::string& base_url, httplib::Error error, int timeout_s = 3);

}  // namespace rc::kv_events
