// Who may talk to the server.
//
// Four rules, decided here so the routing code only asks:
//  1. Bind: a loopback address is always allowed; any other address (a LAN
//     IP, 0.0.0.0, ::) only with an API key, because the model and the
//     cache contents (other people's prompts) would be open to the network.
//  2. Key: with --api-key, every request on every route needs
//     "Authorization: Bearer KEY" (compared in constant time).
//  3. Origin: a browser names the page's origin in every cross-site
//     request; only the origins given with --allow-origin are served
//     (checked in server.cpp; check_origin() validates the flag).
//  4. Host header: without a key, a browser page on some other site could
//     reach a loopback server through DNS rebinding (evil.example resolving
//     to 127.0.0.1). The Host header then names that site, so requests are
//     accepted only when Host names a loopback address or the bind address.
#pragma once

#include <string>

#include "radixchat/status.h"

namespace rc::server {

// 127.0.0.0/8, ::1 and "localhost" (which resolves to loopback only).
bool is_loopback_host(const std::string& host);

// invalid_argument, with an explanation for the user, when `host` is not a
// loopback address and `api_key` is empty.
Status check_bind_address(const std::string& host, const std::string& api_key);

// Rule 2: true when no key is configured or `authorization` carries it.
bool bearer_authorized(const std::string& authorization, const std::string& api_key);

// Rule 3: invalid_argument unless `origin` is an origin as browsers send
// it: http:// or https://, a host, an optional port, no path.
Status check_origin(const std::string& origin);

// Rule 4: true when `host_header` (as sent, "name[:port]") names a loopback
// address or `bind_host`. An absent header (HTTP/1.0) is allowed.
bool host_header_allowed(const std::string& host_header, const std::string& bind_host);

}  // namespace rc::server
