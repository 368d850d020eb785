// `radixchat-cli serve` as a child process, as a user runs it: it prints
// the URL once listening, answers, and exits 0 on SIGINT/SIGTERM (signals
// can land on any thread, including ones libraries start before main).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>

#include "server-test-util.h"
#include "skip-or-fail.h"

namespace rc::server::testing {
namespace {

struct Child {
  pid_t pid = -1;
  int port = 0;
};

// Starts `radixchat-cli serve --port 0 ...` and reads its "listening on" line.
Child start_serve(const std::vector<std::string>& extra) {
  int out[2];
  EXPECT_EQ(pipe(out), 0);
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    std::vector<std::string> args = {
        RADIXCHAT_BINARY_DIR "/app/radixchat-cli", "serve", "--port", "0", "--threads", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  FILE* f = fdopen(out[0], "r");
  char line[256] = {};
  if (f && std::fgets(line, sizeof(line), f)) {
    std::smatch m;
    std::string s(line);
    if (std::regex_search(s, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/v1)"))) {
      c.port = std::stoi(m[1]);
    }
  }
  if (f) std::fclose(f);
  return c;
}

// Exit status, or -1 when it did not exit within `timeout`.
int wait_exit(pid_t pid, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

class ServeProcessTest : public ::testing::TestWithParam<int> {};

TEST_P(ServeProcessTest, ServesAndStopsGracefullyOnSignal) {
  std::string why;
  if (!shared_engine(&why)) RC_SKIP_OR_FAIL("model not available: " << why);
  Child c = start_serve({"--api-key", "k"});
  ASSERT_GT(c.pid, 0);
  ASSERT_GT(c.port, 0) << "no 'listening on' line";
  httplib::Client cli("127.0.0.1", c.port);
  cli.set_bearer_token_auth("k");
  auto r = cli.Get("/v1/models");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(httplib::Client("127.0.0.1", c.port).Get("/v1/models")->status, 401);
  kill(c.pid, GetParam());
  EXPECT_EQ(wait_exit(c.pid, std::chrono::seconds(20)), 0);
}

INSTANTIATE_TEST_SUITE_P(Signals, ServeProcessTest, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& info) {
                           return info.param == SIGINT ? "SIGINT" : "SIGTERM";
                         });

}  // namespace
}  // namespace rc::server::testing
