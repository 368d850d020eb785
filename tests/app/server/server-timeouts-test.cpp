// Slow and greedy clients against the server's own connection handling
// (connection-queue.h, reception.h), over raw sockets so the client can
// misbehave: a request head not finished within head_timeout is answered
// 408 and closed; a body that trickles past read_timeout has its
// connection closed; one client address holding max_client_connections
// workers gets 503 with Retry-After for more, while another address is
// served; a kept-alive connection serves requests one after another.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include "server-test-util.h"

namespace rc::server::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A TCP connection from `source` (a loopback address) to the server.
class RawClient {
 public:
  RawClient(int port, const char* source = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof(from)), 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  }
  ~RawClient() { ::close(fd_); }

  void send(const std::string& s) {
    ASSERT_EQ(::send(fd_, s.data(), s.size(), MSG_NOSIGNAL), ssize_t(s.size()));
  }

  // What arrives until the server closes or `most` passes.
  std::string read_all(std::chrono::milliseconds most) {
    std::string got;
    const auto end = Clock::now() + most;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
      if (left.count() <= 0) return got;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return got;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return got;
      got.append(buf, static_cast<size_t>(n));
    }
  }

  // One response with a Content-Length body, from a kept-alive connection;
  // bytes of the next response stay for the next call.
  std::string read_response(std::chrono::milliseconds most) {
    const auto end = Clock::now() + most;
    while (Clock::now() < end) {
      const size_t head = pending_.find("\r\n\r\n");
      const size_t cl = pending_.find("Content-Length: ");
      if (head != std::string::npos && cl != std::string::npos && cl < head) {
        const size_t whole = head + 4 + std::stoul(pending_.substr(cl + 16));
        if (pending_.size() >= whole) {
          std::string one = pending_.substr(0, whole);
          pending_.erase(0, whole);
          return one;
        }
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      pending_.append(buf, static_cast<size_t>(n));
    }
    return std::exchange(pending_, std::string());
  }

 private:
  int fd_ = -1;
  std::string pending_;
};

// The shared engine; the test skips when the model file is missing.
#define RC_ENGINE_OR_SKIP(engine)               \
  std::string why_missing;                      \
  Engine* engine = shared_engine(&why_missing); \
  if (!engine) GTEST_SKIP() << why_missing

TEST(ServerTimeouts, UnfinishedHeadIsAnswered408) {
  RC_ENGINE_OR_SKIP(engine);
  ServerOptions o;
  o.head_timeout = 400ms;
  LiveServer server(*engine, o);
  RawClient c(server.port());
  c.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");  // no blank line: unfinished
  const auto t0 = Clock::now();
  const std::string got = c.read_all(3000ms);
  EXPECT_EQ(got.rfind("HTTP/1.1 408", 0), 0u) << got;
  EXPECT_LT(Clock::now() - t0, 1500ms);
}

TEST(ServerTimeouts, TricklingBodyIsCutOff) {
  RC_ENGINE_OR_SKIP(engine);
  ServerOptions o;
  o.read_timeout = 500ms;
  LiveServer server(*engine, o);
  RawClient c(server.port());
  c.send(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
      "application/json\r\nContent-Length: 100\r\n\r\n{\"messages\"");
  const auto t0 = Clock::now();
  const std::string got = c.read_all(3000ms);
  EXPECT_LT(Clock::now() - t0, 2000ms) << got;
  EXPECT_EQ(got.find("HTTP/1.1 200"), std::string::npos) << got;
}

TEST(ServerTimeouts, KeptAliveConnectionServesRequestsInTurn) {
  RC_ENGINE_OR_SKIP(engine);
  LiveServer server(*engine, ServerOptions{});
  RawClient c(server.port());
  for (int i = 0; i < 3; ++i) {
    c.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const std::string got = c.read_response(3000ms);
    EXPECT_EQ(got.rfind("HTTP/1.1 200", 0), 0u) << i << ": " << got;
  }
  // Two pipelined in one write: both answered, in order.
  c.send(
      "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: "
      "127.0.0.1\r\n\r\n");
  EXPECT_EQ(c.read_response(3000ms).rfind("HTTP/1.1 200", 0), 0u);
  const std::string second = c.read_response(3000ms);
  EXPECT_EQ(second.rfind("HTTP/1.1 200", 0), 0u) << second;
  EXPECT_NE(second.find("\"object\":\"list\""), std::string::npos) << second;
}

TEST(ServerTimeouts, OneClientAddressHoldsAtMostItsShareOfWorkers) {
  RC_ENGINE_OR_SKIP(engine);
  ServerOptions o;
  o.max_client_connections = 2;
  LiveServer server(*engine, o);
  // Three requests from 127.0.0.3 whose bodies never finish: two hold
  // workers, the third is over the cap.
  const std::string slow =
      "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 50\r\n\r\n{";
  RawClient a(server.port(), "127.0.0.3"), b(server.port(), "127.0.0.3");
  a.send(slow);
  b.send(slow);
  std::this_thread::sleep_for(300ms);  // both reach their workers
  RawClient c(server.port(), "127.0.0.3");
  c.send("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const std::string over = c.read_response(3000ms);
  EXPECT_EQ(over.rfind("HTTP/1.1 503", 0), 0u) << over;
  EXPECT_NE(over.find("Retry-After"), std::string::npos) << over;
  RawClient d(server.port(), "127.0.0.1");
  d.send("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const std::string other = d.read_response(3000ms);
  EXPECT_EQ(other.rfind("HTTP/1.1 200", 0), 0u) << other;
}

}  // namespace
}  // namespace rc::server::testing
