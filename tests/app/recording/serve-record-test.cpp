// `serve --record`: requests sent to the server become request rows tied
// to their match events, and the recording replays to the final snapshot
// taken when the server stops.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <httplib.h>

#include "recording/recording-reader.h"
#include "recording/replay-tree.h"

namespace rc::recording {
namespace {

namespace fs = std::filesystem;
const std::string kCli = RADIXCHAT_BINARY_DIR "/app/radixchat-cli";

TEST(ServeRecord, RequestsAndEventsOfAServedEngineAreRecorded) {
  const std::string path =
      (fs::temp_directory_path() / ("rc-serve-rec-" + std::to_string(getpid()) + ".db")).string();
  fs::remove(path);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    execl(kCli.c_str(), kCli.c_str(), "serve", "--port", "0", "--threads", "1", "--record",
          path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  FILE* f = fdopen(out[0], "r");
  char line[256] = {0};
  int port = 0;
  while (port == 0 && fgets(line, sizeof line, f))
    if (sscanf(line, "listening on http://127.0.0.1:%d", &port) == 1) break;
  ASSERT_GT(port, 0) << "the server did not start";
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(120);
  for (const char* q : {"hello there", "hello again", "what is a radix tree"}) {
    const std::string body =
        std::string(R"({"messages":[{"role":"system","content":"You are a helpful assistant."},)") +
        R"({"role":"user","content":")" + q + R"("}],"max_tokens":4})";
    auto res = cli.Post("/v1/chat/completions", body, "application/json");
    ASSERT_TRUE(res) << "no answer";
    ASSERT_EQ(res->status, 200) << res->body;
  }
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  fclose(f);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  auto r = Recording::open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value()->summary().meta.at("source"), "serve");
  auto reqs = (*r)->requests();
  ASSERT_TRUE(reqs.ok());
  ASSERT_EQ(reqs->size(), 3u);
  for (const RequestRecord& q : reqs.value()) {
    EXPECT_EQ(q.finish, "length");
    EXPECT_EQ(q.output.size(), 4u);
    EXPECT_GE(q.match_seq, 0);
  }
  // The second request shares the system prompt and "hello" with the first.
  EXPECT_GT((*reqs)[1].matched_tokens, 10);
  // The last snapshot (taken at shutdown) is reached from the first one,
  // unless the recording says events were lost on the way.
  auto snaps = (*r)->snapshots();
  ASSERT_TRUE(snaps.ok());
  ASSERT_GE(snaps->size(), 2u);
  auto gaps = (*r)->gaps();
  ASSERT_TRUE(gaps.ok());
  auto last = (*r)->load_snapshot(snaps->back().id);
  ASSERT_TRUE(last.ok());
  if (gaps->empty()) {
    auto first = (*r)->load_snapshot(snaps->front().id);
    auto evs = (*r)->events(first->next_seq, last->next_seq);
    ReplayTree tree;
    tree.reset(first.value());
    for (const CacheEvent& e : evs.value()) ASSERT_EQ(tree.apply(e), "");
    EXPECT_EQ(tree.nodes(), last->nodes);
  }
  auto end = (*r)->tree_at(last->next_seq);
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(end->nodes, last->nodes);
  fs::remove(path);
}

}  // namespace
}  // namespace rc::recording
