// `radixchat-cli bench --record` end to end: a whole run replays to every
// engine snapshot it stored, and a run killed with SIGKILL mid-write leaves
// a recording that opens and replays up to its last commit.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "recording/recording-reader.h"
#include "recording/replay-tree.h"
#include "test-paths.h"

namespace rc::recording {
namespace {

namespace fs = std::filesystem;

const std::string kCli = RADIXCHAT_BINARY_DIR "/app/radixchat-cli";

std::string temp_path(const std::string& name) { return rc::test::temp_path("rc-rec", name); }

pid_t start_bench(const std::string& path, int requests) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string n = std::to_string(requests);
    // stdout/stderr are not needed: keep the test log short.
    freopen("/dev/null", "w", stdout);
    execl(kCli.c_str(), kCli.c_str(), "bench", "--workload", "multi-turn", "--requests", n.c_str(),
          "--concurrency", "2", "--max-tokens", "6", "--threads", "1", "--record", path.c_str(),
          "--json", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Replaying forward from the first snapshot reaches every engine snapshot
// in the file exactly, and the reader's seek to the last event rebuilds.
void expect_replays(const std::string& path, size_t min_engine_snapshots) {
  auto r = Recording::open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto snaps = (*r)->snapshots();
  ASSERT_TRUE(snaps.ok());
  ASSERT_FALSE(snaps->empty());
  auto first = (*r)->load_snapshot(snaps->front().id);
  ASSERT_TRUE(first.ok());
  const int64_t last = (*r)->summary().last_seq;
  ASSERT_GE(last, 0);
  auto evs = (*r)->events(first->next_seq, uint64_t(last + 1));
  ASSERT_TRUE(evs.ok());
  ReplayTree tree;
  tree.reset(first.value());
  size_t e = 0, compared = 0;
  for (const SnapshotRecord& s : snaps.value()) {
    for (; e < evs->size() && tree.next_seq() < s.next_seq; ++e)
      ASSERT_EQ(tree.apply((*evs)[e]), "");
    if (s.source != "engine" || tree.next_seq() != s.next_seq) continue;
    auto want = (*r)->load_snapshot(s.id);
    ASSERT_TRUE(want.ok());
    ASSERT_EQ(tree.nodes(), want->nodes) << "engine snapshot at seq " << s.next_seq;
    ++compared;
  }
  EXPECT_GE(compared, min_engine_snapshots);
  auto end = (*r)->tree_at(uint64_t(last + 1));
  ASSERT_TRUE(end.ok()) << end.status().message();
  for (; e < evs->size(); ++e) ASSERT_EQ(tree.apply((*evs)[e]), "");
  EXPECT_EQ(end->nodes, tree.nodes());
  EXPECT_FALSE((*r)->tree_at(uint64_t(last + 2)).ok());  // nothing past the end
}

TEST(RecordingCli, BenchRecordReplaysToEveryEngineSnapshot) {
  const std::string path = temp_path("bench.db");
  const pid_t pid = start_bench(path, 12);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // The first and the final snapshot at least.
  expect_replays(path, 2);
  auto r = Recording::open(path);
  auto reqs = (*r)->requests();
  ASSERT_TRUE(reqs.ok());
  ASSERT_EQ(reqs->size(), 12u);
  for (const RequestRecord& q : reqs.value()) {
    EXPECT_EQ(q.finish, "length");
    EXPECT_FALSE(q.prompt.empty());
    EXPECT_GE(q.match_seq, 0);
    EXPECT_EQ(q.output.size(), 6u);
  }
  EXPECT_FALSE(fs::exists(path + "-wal"));  // closed cleanly: one file
  fs::remove(path);
}

TEST(RecordingCli, RecordingCutBySigkillOpensAndReplaysToItsLastCommit) {
  const std::string path = temp_path("killed.db");
  const pid_t pid = start_bench(path, 400);
  // Wait until some events are committed (visible to another connection).
  bool some = false;
  for (int i = 0; i < 600 && !some; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!fs::exists(path)) continue;
    auto r = Recording::open(path);
    some = r.ok() && (*r)->summary().events > 40;
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(some) << "the bench never committed events";
  ASSERT_TRUE(WIFSIGNALED(status)) << "the bench finished before the kill";
  expect_replays(path, 1);
  auto r = Recording::open(path);
  auto reqs = (*r)->requests();
  ASSERT_TRUE(reqs.ok());
  EXPECT_GT(reqs->size(), 0u);
  EXPECT_LT(reqs->size(), 400u);
  for (const char* ext : {"", "-wal", "-shm"}) fs::remove(path + ext);
}

}  // namespace
}  // namespace rc::recording
