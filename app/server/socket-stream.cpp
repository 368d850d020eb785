#include "socket-stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rc::server {

namespace {

thread_local int t_serving_sock = -1;

void address_of(const sockaddr_storage& a, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

}  // namespace

SocketStream::SocketStream(Connection& conn, SteadyClock::time_point read_deadline,
                           std::chrono::milliseconds write_timeout)
    : conn_(conn), read_deadline_(read_deadline), write_timeout_(write_timeout) {}

bool SocketStream::wait(short events, std::chrono::milliseconds most) const {
  pollfd p{conn_.sock, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(most.count(), 0)));
    if (n < 0 && errno == EINTR) continue;
    return n > 0 && (p.revents & events);
  }
}

bool SocketStream::is_readable() const {
  if (consumed_ < conn_.buffered.size()) return true;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(read_deadline_ - SteadyClock::now());
  return left.count() > 0 && wait(POLLIN, left);
}

bool SocketStream::is_writable() const { return wait(POLLOUT, write_timeout_); }

ssize_t SocketStream::read(char* ptr, size_t size) {
  if (consumed_ < conn_.buffered.size()) {
    const size_t n = std::min(size, conn_.buffered.size() - consumed_);
    std::memcpy(ptr, conn_.buffered.data() + consumed_, n);
    consumed_ += n;
    return static_cast<ssize_t>(n);
  }
  if (!is_readable()) {
    read_failed_ = true;
    return -1;
  }
  for (;;) {
    const ssize_t n = ::recv(conn_.sock, ptr, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_failed_ = true;
    return n;
  }
}

ssize_t SocketStream::write(const char* ptr, size_t size) {
  if (!is_writable()) return -1;
  for (;;) {
    const ssize_t n = ::send(conn_.sock, ptr, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

void SocketStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  if (::getpeername(conn_.sock, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    address_of(a, ip, port);
  }
}

void SocketStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  if (::getsockname(conn_.sock, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    address_of(a, ip, port);
  }
}

void SocketStream::settle() {
  conn_.buffered.erase(0, std::min(consumed_, conn_.buffered.size()));
  consumed_ = 0;
}

bool peer_gone(int sock) {
  pollfd p{sock, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

std::string peer_address(int sock) {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  std::string ip;
  int port = 0;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len) == 0) address_of(a, ip, port);
  return ip;
}

ServingScope::ServingScope(int sock) { t_serving_sock = sock; }
ServingScope::~ServingScope() { t_serving_sock = -1; }

bool client_gone() { return t_serving_sock >= 0 && peer_gone(t_serving_sock); }

}  // namespace rc::server
