// KV events stay on the machine unless asked: the endpoint policy, CURVE key
// files, and a CURVE publisher that only the holder of its public key can
// follow (a wrong key or a plain subscriber receives nothing within 5 s).
// Ports 24500-24599.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "kv-publisher.h"
#include "kv-security.h"
#include "kv-subscriber.h"

namespace rc::kv_events {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "rc-kvsec-XXXXXX").string();
    if (mkdtemp(t.data())) path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& n) const { return path_ / n; }

 private:
  fs::path path_;
};

unsigned mode_of(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? st.st_mode & 0777 : 07777;
}

TEST(KvEventsPolicy, OnlyLoopbackIpcAndInprocAreLocal) {
  for (const char* ep : {"tcp://127.0.0.1:5557", "tcp://127.1.2.3:*", "tcp://localhost:5557",
                         "tcp://[::1]:5557", "tcp://lo:5557", "ipc:///tmp/kv.sock", "inproc://kv"})
    EXPECT_TRUE(is_local_endpoint(ep)) << ep;
  for (const char* ep :
       {"tcp://0.0.0.0:5557", "tcp://*:5557", "tcp://[::]:5557", "tcp://192.168.1.20:5557",
        "tcp://eth0:5557", "tcp://128.0.0.1:5557", "tcp://127.0.0.1.example.com:5557",
        "epgm://eth0;239.1.1.1:5555", "ws://127.0.0.1:80", "nonsense"})
    EXPECT_FALSE(is_local_endpoint(ep)) << ep;
}

TEST(KvEventsPolicy, RemoteEndpointNeedsAllowRemoteOrCurve) {
  const Status refused = check_publish_endpoint("--kv-events", "tcp://0.0.0.0:24501", false, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), StatusCode::invalid_argument);
  EXPECT_NE(refused.message().find("--kv-events-allow-remote"), std::string::npos);
  EXPECT_NE(refused.message().find("tcp://0.0.0.0:24501"), std::string::npos);
  EXPECT_EQ(refused.message().find('\n'), std::string::npos);
  EXPECT_TRUE(check_publish_endpoint("--kv-events", "tcp://0.0.0.0:24501", true, false).ok());
  EXPECT_TRUE(check_publish_endpoint("--kv-events", "tcp://0.0.0.0:24501", false, true).ok());
  EXPECT_TRUE(check_publish_endpoint("--kv-events", "tcp://127.0.0.1:24501", false, false).ok());
  EXPECT_TRUE(check_publish_endpoint("--kv-events-replay", "", false, false).ok());
  EXPECT_FALSE(check_publish_endpoint("--kv-events", "tcp://*:24501", false, false).ok());
  EXPECT_FALSE(check_publish_endpoint("--kv-events", "ws://[::]:24501", false, false).ok());
  // Not an endpoint: left to the bind, which names ZeroMQ's reason.
  EXPECT_TRUE(check_publish_endpoint("--kv-events", "nonsense://x", false, false).ok());
}

TEST(KvEventsCurve, KeyFilesRoundTripAndAreChecked) {
  if (!curve_available().ok()) GTEST_SKIP() << curve_available().message();
  TempDir dir;
  ::mode_t old = ::umask(022);
  auto keys = generate_curve_keypair();
  ASSERT_TRUE(keys.ok());
  ASSERT_TRUE(write_curve_key_files(dir / "kv.key", keys.value()).ok());
  ::umask(old);
  EXPECT_EQ(mode_of(dir / "kv.key"), 0600u);
  EXPECT_FALSE(write_curve_key_files(dir / "kv.key", keys.value()).ok()) << "never overwritten";

  auto secret = read_curve_secret_file(dir / "kv.key");
  ASSERT_TRUE(secret.ok()) << secret.status().message();
  EXPECT_EQ(secret->secret_key, keys->secret_key);
  EXPECT_EQ(secret->public_key, keys->public_key);
  auto pub = read_curve_public_key((dir / "kv.key.pub").string());
  ASSERT_TRUE(pub.ok()) << pub.status().message();
  EXPECT_EQ(pub.value(), keys->public_key);
  auto bare = read_curve_public_key(keys->public_key);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare.value(), keys->public_key);

  // A secret key file others can read is refused, as ssh refuses one.
  ASSERT_EQ(::chmod((dir / "kv.key").c_str(), 0644), 0);
  auto shared = read_curve_secret_file(dir / "kv.key");
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("chmod 600"), std::string::npos);
  // The subscriber is told to use the .pub, not the secret.
  auto wrong_file = read_curve_public_key((dir / "kv.key").string());
  ASSERT_FALSE(wrong_file.ok());
  EXPECT_NE(wrong_file.status().message().find(".pub"), std::string::npos);
  EXPECT_FALSE(read_curve_public_key("not-a-key").ok());
  // curve_keygen's layout: a header line, then the bare key.
  {
    std::ofstream bare(dir / "bare.pub");
    bare << "== CURVE PUBLIC KEY ==\n" << keys->public_key << "\n";
  }
  auto from_bare = read_curve_public_key((dir / "bare.pub").string());
  ASSERT_TRUE(from_bare.ok()) << from_bare.status().message();
  EXPECT_EQ(from_bare.value(), keys->public_key);
  EXPECT_FALSE(read_curve_secret_file(dir / "missing").ok());
  {
    std::ofstream bad(dir / "bad.key");
    bad << "secret-key = too-short\n";
  }
  ASSERT_EQ(::chmod((dir / "bad.key").c_str(), 0600), 0);
  EXPECT_FALSE(read_curve_secret_file(dir / "bad.key").ok());
}

// A CURVE publisher on loopback, and three subscribers at once: one with
// the right public key, one with another pair's key, one plain. The first
// receives; the other two get nothing in 5 s of steady publishing.
TEST(KvEventsCurve, OnlyTheHolderOfThePublicKeyReceives) {
  if (!curve_available().ok()) GTEST_SKIP() << curve_available().message();
  auto server = generate_curve_keypair();
  auto other = generate_curve_keypair();
  ASSERT_TRUE(server.ok() && other.ok());
  PublisherOptions po;
  po.endpoint = "tcp://127.0.0.1:24510";
  po.curve_secret_key = server->secret_key;
  auto pub = Publisher::bind(po);
  ASSERT_TRUE(pub.ok()) << pub.status().message();

  auto right = Subscriber::connect({{po.endpoint, "", server->public_key}}, "");
  auto wrong = Subscriber::connect({{po.endpoint, "", other->public_key}}, "");
  auto plain = Subscriber::connect({{po.endpoint, "", ""}}, "");
  ASSERT_TRUE(right.ok() && wrong.ok() && plain.ok());

  Batch batch;
  batch.events.push_back(Event{});  // AllBlocksCleared
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    (*pub)->publish(batch);
    for (auto* s : {right->get(), wrong->get(), plain->get()}) s->poll(15);
  }
  EXPECT_GT((*right)->stats().messages, 0u) << "the key holder received nothing";
  EXPECT_EQ((*wrong)->stats().messages, 0u) << "a subscriber with a wrong key received events";
  EXPECT_EQ((*plain)->stats().messages, 0u) << "a plain subscriber received CURVE events";
}

}  // namespace
}  // namespace rc::kv_events
