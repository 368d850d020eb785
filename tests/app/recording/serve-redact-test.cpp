// `serve --record FILE --redact` under umask 022: the recording and its
// -wal/-shm are 0600 while the server runs, the closed file is 0600 and
// holds neither the prompts' text nor their token ids, and cache-report
// and cache-export read it, showing lengths (the export is 0600 too).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "recording/recording-format.h"
#include "recording/recording-reader.h"
#include "recording/redaction.h"

namespace rc::recording {
namespace {

namespace fs = std::filesystem;
const std::string kCli = RADIXCHAT_BINARY_DIR "/app/radixchat-cli";

unsigned mode_of(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? st.st_mode & 0777 : 07777;
}

// Runs a shell command; its stdout, and its exit status in `status`.
std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

TEST(ServeRecord, RedactedRecordingIsOwnerOnlyAndHoldsNoPromptTextOrIds) {
  const ::mode_t old_umask = ::umask(022);
  std::string tmpl = (fs::temp_directory_path() / "rc-serve-redact-XXXXXX").string();
  ASSERT_TRUE(mkdtemp(tmpl.data()));
  const fs::path dir = tmpl;
  const fs::path rec = dir / "bug-report.db";
  const char* prompts[] = {"zebra quartz violin harbour", "zebra quartz violin lantern"};

  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    execl(kCli.c_str(), kCli.c_str(), "serve", "--port", "0", "--threads", "1", "--record",
          rec.c_str(), "--redact", static_cast<char*>(nullptr));
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
  for (const char* q : prompts) {
    const std::string body =
        std::string(R"({"messages":[{"role":"system","content":"You are a helpful assistant."},)") +
        R"({"role":"user","content":")" + q + R"("}],"max_tokens":4})";
    auto res = cli.Post("/v1/chat/completions", body, "application/json");
    ASSERT_TRUE(res) << "no answer";
    ASSERT_EQ(res->status, 200) << res->body;
  }
  // While it is written: the file and SQLite's -wal and -shm.
  for (const char* suffix : {"", "-wal", "-shm"})
    EXPECT_EQ(mode_of(rec.string() + suffix), 0600u) << suffix;
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  fclose(f);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(mode_of(rec), 0600u);
  EXPECT_EQ(mode_of(dir), 0700u) << "mkdtemp's folder, as a check of mode_of";

  auto r = Recording::open(rec.string());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(is_redacted((*r)->summary().meta));
  auto reqs = (*r)->requests();
  ASSERT_TRUE(reqs.ok());
  ASSERT_EQ(reqs->size(), 2u);
  EXPECT_GT((*reqs)[1].matched_tokens, 10) << "hits are kept";

  // Neither the words nor their token ids (any three in a row, as the
  // file's blobs would hold them) are in the file.
  std::ifstream in(rec, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  for (const char* q : prompts) {
    for (const char* word : {"zebra", "quartz", "violin", "harbour", "lantern"})
      EXPECT_EQ(bytes.find(word), std::string::npos) << word;
    int st = 0;
    const auto ids = nlohmann::json::parse(
        run(kCli + " tokenize --text '" + q + "' 2>/dev/null", &st), nullptr, false);
    ASSERT_EQ(st, 0);
    ASSERT_TRUE(ids.is_array() && ids.size() >= 3) << ids.dump();
    for (size_t i = 0; i + 3 <= ids.size(); ++i) {
      const std::string w =
          encode_ids({ids[i].get<int32_t>(), ids[i + 1].get<int32_t>(), ids[i + 2].get<int32_t>()});
      EXPECT_EQ(bytes.find(w), std::string::npos) << q << " ids at " << i;
    }
  }

  // The report and the picture work, and show lengths, never text.
  ::umask(022);
  int st = 0;
  const std::string report = run(kCli + " cache-report " + rec.string() + " --json", &st);
  EXPECT_EQ(st, 0) << report;
  const auto j = nlohmann::json::parse(report, nullptr, false);
  ASSERT_TRUE(j.is_object()) << report;
  EXPECT_EQ(j["requests"], 2);
  EXPECT_EQ(j["meta"]["redacted"], kRedactedMetaValue);
  for (const auto& m : j["misses"]) {
    const std::string t = m["prompt_span_text"];
    EXPECT_NE(t.find("token"), std::string::npos) << t;
  }
  EXPECT_EQ(report.find("zebra"), std::string::npos);
  const std::string text = run(kCli + " cache-report " + rec.string(), &st);
  EXPECT_EQ(st, 0) << text;
  const fs::path svg = dir / "tree.svg";
  run(kCli + " cache-export " + rec.string() + " --out " + svg.string() + " 2>&1", &st);
  EXPECT_EQ(st, 0);
  EXPECT_EQ(mode_of(svg), 0600u);
  std::ifstream sin(svg);
  const std::string picture((std::istreambuf_iterator<char>(sin)), {});
  EXPECT_NE(picture.find(" tokens"), std::string::npos);
  EXPECT_EQ(picture.find("zebra"), std::string::npos);
  int refused = 0;
  run(kCli + " cache-export " + rec.string() + " --model x.gguf --out " +
          (dir / "t2.svg").string() + " 2>/dev/null",
      &refused);
  EXPECT_EQ(refused, 1) << "--model cannot label a redacted recording";
  ::umask(old_umask);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rc::recording
