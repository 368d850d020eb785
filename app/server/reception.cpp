#include "reception.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

namespace rc::server {

namespace {

// The longest the thread sleeps without looking at the deadlines.
constexpr std::chrono::milliseconds kMaxSleep{500};

void close_socket(int sock) {
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

// A last answer to a connection being closed, best effort: the socket may
// be full or gone, and nothing waits for it.
void answer_and_close(int sock, int status, const char* reason, const std::string& message) {
  const std::string body = R"({"error":{"message":")" + message +
                           R"(","type":"invalid_request_error","param":null,"code":null}})";
  const std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason +
                           "\r\nContent-Type: application/json\r\nConnection: close\r\n"
                           "Content-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body;
  ssize_t ignored = ::send(sock, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)ignored;
  close_socket(sock);
}

// "GET /health" without a body: the health lane's requests.
bool is_health_check(const std::string& head) {
  if (!(head.starts_with("GET /health ") || head.starts_with("GET /health?"))) return false;
  std::string lower(head);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("\ncontent-length:") == std::string::npos &&
         lower.find("\ntransfer-encoding:") == std::string::npos;
}

}  // namespace

Reception::Reception(ReceptionOptions options, Dispatch dispatch)
    : options_(options), dispatch_(std::move(dispatch)) {
  if (::pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) wake_pipe_[0] = wake_pipe_[1] = -1;
  thread_ = std::thread([this] { run(); });
}

Reception::~Reception() {
  stop();
  for (int fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

void Reception::wake() {
  const char b = 1;
  ssize_t ignored = ::write(wake_pipe_[1], &b, 1);
  (void)ignored;
}

void Reception::admit(int sock) {
  Connection c;
  c.sock = sock;
  c.peer = peer_address(sock);
  c.deadline = SteadyClock::now() + options_.head_timeout;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return close_socket(sock);
    arrivals_.push_back(std::move(c));
  }
  wake();
}

void Reception::resume(Connection conn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    release(conn);
    if (stopping_) return close_socket(conn.sock);
    conn.deadline = SteadyClock::now() + options_.head_timeout;
    arrivals_.push_back(std::move(conn));
  }
  wake();
}

void Reception::close(Connection conn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    release(conn);
  }
  close_socket(conn.sock);
}

void Reception::release(Connection& c) {
  if (!c.in_worker) return;
  c.in_worker = false;
  auto it = in_workers_.find(c.peer);
  if (it != in_workers_.end() && --it->second <= 0) in_workers_.erase(it);
}

void Reception::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
}

bool Reception::read_head(Connection& c, std::vector<std::pair<Connection, Lane>>& ready) {
  size_t end = c.buffered.find("\r\n\r\n");
  if (end == std::string::npos) {
    char buf[4096];
    const size_t room = kMaxHeadBytes + 4 - std::min(c.buffered.size(), kMaxHeadBytes);
    const ssize_t n = ::recv(c.sock, buf, std::min(sizeof(buf), room), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      close(std::move(c));  // the client went away
      return true;
    }
    if (n > 0) c.buffered.append(buf, static_cast<size_t>(n));
    // The terminator may straddle what was there and what just came.
    end = c.buffered.find("\r\n\r\n");
  }
  if (end == std::string::npos) {
    if (c.buffered.size() <= kMaxHeadBytes) return false;
    answer_and_close(c.sock, 431, "Request Header Fields Too Large",
                     "The request line and headers are larger than this server accepts (" +
                         std::to_string(kMaxHeadBytes) + " bytes).");
    return true;
  }
  Lane lane = Lane::main;
  if (is_health_check(c.buffered.substr(0, end + 4))) {
    lane = Lane::health;
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    int& held = in_workers_[c.peer];
    if (held >= options_.max_per_client) {
      lane = Lane::overflow;
    } else {
      ++held;
      c.in_worker = true;
    }
  }
  ready.emplace_back(std::move(c), lane);
  return true;
}

void Reception::run() {
  std::vector<Connection> waiting;
  std::vector<pollfd> fds;
  for (;;) {
    std::vector<std::pair<Connection, Lane>> ready;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
      for (Connection& c : arrivals_) waiting.push_back(std::move(c));
      arrivals_.clear();
    }
    auto sleep = kMaxSleep;
    const auto now = SteadyClock::now();
    fds.assign(1, pollfd{wake_pipe_[0], POLLIN, 0});
    for (const Connection& c : waiting) {
      fds.push_back(pollfd{c.sock, POLLIN, 0});
      sleep = std::min(sleep, std::chrono::duration_cast<std::chrono::milliseconds>(
                                  c.deadline - now + std::chrono::milliseconds(1)));
    }
    // A connection given back with a whole request already read (the
    // client pipelined it) must not wait for more bytes that never come.
    for (const Connection& c : waiting) {
      if (c.buffered.find("\r\n\r\n") != std::string::npos) sleep = std::chrono::milliseconds(0);
    }
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(sleep.count(), 0)));
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) {
      char drain[64];
      while (::read(wake_pipe_[0], drain, sizeof(drain)) > 0) {
      }
    }
    const auto after = SteadyClock::now();
    std::vector<Connection> still;
    still.reserve(waiting.size());
    for (size_t i = 0; i < waiting.size(); ++i) {
      Connection& c = waiting[i];
      const bool has_head = c.buffered.find("\r\n\r\n") != std::string::npos;
      if ((fds[i + 1].revents || has_head) && read_head(c, ready)) continue;
      if (after >= c.deadline) {
        if (c.buffered.empty()) {
          close(std::move(c));
        } else {
          answer_and_close(c.sock, 408, "Request Timeout",
                           "The request line and headers did not arrive within " +
                               std::to_string(options_.head_timeout.count()) + " ms.");
        }
        continue;
      }
      still.push_back(std::move(c));
    }
    waiting = std::move(still);
    for (auto& [c, lane] : ready) dispatch_(std::move(c), lane);
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (Connection& c : waiting) close_socket(c.sock);
  for (Connection& c : arrivals_) close_socket(c.sock);
  arrivals_.clear();
}

}  // namespace rc::server
