#include "http-failure.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <regex>

namespace rc::kv_events {

namespace {

std::string lower_first(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// The reason a TCP connect to host:port fails now, or "" when it succeeds.
std::string connect_failure(const std::string& host, const std::string& port, int timeout_s) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return "cannot resolve the host name '" + host + "': " + lower_first(gai_strerror(rc));
  }
  std::string why = "no address to connect to";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = lower_first(std::strerror(errno));
      continue;
    }
    int err = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, timeout_s * 1000) == 1) {
          socklen_t len = sizeof(err);
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        } else {
          err = ETIMEDOUT;
        }
      }
    }
    close(fd);
    if (err == 0) {
      why.clear();
      break;
    }
    why = lower_first(std::strerror(err));
    if (err == ECONNREFUSED) why += " (nothing is listening on " + host + ":" + port + ")";
    if (err == ETIMEDOUT) why += " (no answer within " + std::to_string(timeout_s) + " s)";
  }
  freeaddrinfo(found);
  return why;
}

}  // namespace

std::string http_failure(const std::string& base_url, httplib::Error error, int timeout_s) {
  switch (error) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout: {
      std::smatch m;
      if (std::regex_search(base_url, m,
                            std::regex(R"(^(https?)://(\[[^\]]+\]|[^:/]+)(?::(\d+))?)"))) {
        std::string host = m[2];
        if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
        const std::string port = m[3].matched ? m[3].str() : m[1] == "https" ? "443" : "80";
        const std::string why = connect_failure(host, port, timeout_s);
        if (!why.empty()) return why;
      }
      return error == httplib::Error::ConnectionTimeout
                 ? "timed out connecting"
                 : "the connection failed (it succeeds now: try again)";
    }
    case httplib::Error::Read:
      return "the server closed the connection or sent nothing in time";
    case httplib::Error::Write:
      return "the request could not be sent (the server closed the connection)";
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLServerVerification:
      return "the TLS connection failed (" + httplib::to_string(error) + ")";
    default:
      return httplib::to_string(error);
  }
}

}  // namespace rc::kv_events
