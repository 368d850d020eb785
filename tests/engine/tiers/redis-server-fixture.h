// A private redis-server for one test: loopback, a password, no persistence,
// on a port in 25000-25999, stopped by its pid.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <hiredis/hiredis.h>

namespace rc::tiers::testing {

inline bool have_redis_server() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/usr/sbin";
  size_t at = 0;
  while (at <= dirs.size()) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    if (::access((dirs.substr(at, end - at) + "/redis-server").c_str(), X_OK) == 0) return true;
    at = end + 1;
  }
  return false;
}

inline bool port_answers(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

class RedisServer {
 public:
  static constexpr const char* kPassword = "rc-test-pw";

  ~RedisServer() { stop(SIGKILL); }

  // Starts on `port`, or on a free port of 25000-25999 when port is 0.
  bool start(int port = 0) {
    std::mt19937 rng(uint32_t(::getpid()) * 2654435761u ^ uint32_t(port));
    for (int attempt = 0; attempt < 20; ++attempt) {
      int p = port != 0 ? port : 25000 + int(rng() % 1000);
      if (port == 0 && port_answers(p)) continue;
      if (launch(p)) return true;
      if (port != 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  void stop(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);  // a stopped server must be able to die
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  void pause() { ::kill(pid_, SIGSTOP); }
  void resume() { ::kill(pid_, SIGCONT); }

  int port() const { return port_; }

  // Every value whose key matches `pattern` (KEYS: fine for a test's server).
  std::vector<std::vector<uint8_t>> values(const std::string& pattern) const {
    std::vector<std::vector<uint8_t>> out;
    redisContext* c = redisConnect("127.0.0.1", port_);
    if (c == nullptr || c->err != 0) return out;
    freeReplyObject(redisCommand(c, "AUTH %s", kPassword));
    auto* keys = static_cast<redisReply*>(redisCommand(c, "KEYS %s", pattern.c_str()));
    for (size_t i = 0; keys != nullptr && keys->type == REDIS_REPLY_ARRAY && i < keys->elements;
         ++i) {
      auto* v = static_cast<redisReply*>(
          redisCommand(c, "GET %b", keys->element[i]->str, size_t(keys->element[i]->len)));
      if (v != nullptr && v->type == REDIS_REPLY_STRING) out.emplace_back(v->str, v->str + v->len);
      freeReplyObject(v);
    }
    freeReplyObject(keys);
    redisFree(c);
    return out;
  }
  std::string url(const std::string& password = kPassword) const {
    return "redis://" + (password.empty() ? std::string() : ":" + password + "@") +
           "127.0.0.1:" + std::to_string(port_);
  }

 private:
  bool launch(int p) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 1);
      ::dup2(null, 2);
      std::string ps = std::to_string(p);
      ::execlp("redis-server", "redis-server", "--port", ps.c_str(), "--bind", "127.0.0.1",
               "--requirepass", kPassword, "--save", "", "--appendonly", "no", "--dir", "/tmp",
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 100; ++i) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return false;  // could not bind
      if (port_answers(p)) {
        pid_ = pid;
        port_ = p;
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return false;
  }

  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace rc::tiers::testing
