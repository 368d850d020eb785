// Helpers for the server tests: a server over the real engine on an
// ephemeral loopback port, run on a background thread, and an SSE parser.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "radixchat/engine.h"
#include "server.h"

namespace rc::server::testing {

// One engine per test process (the model loads once), or nullptr with the
// reason when the model file is missing (the test then skips; any other
// load failure is a test failure).
Engine* shared_engine(std::string* why_missing);

class LiveServer {
 public:
  LiveServer(Engine& engine, ServerOptions options);
  ~LiveServer();  // graceful shutdown, joins the serving thread
  void stop();
  int port() const { return port_; }
  Server& server() { return *server_; }
  httplib::Client client(const std::string& api_key = {}) const;

 private:
  std::unique_ptr<Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// A fixture with a LiveServer over the shared engine for each test (skips
// when the model is missing): 200 ms heartbeats, 2 s shutdown grace.
class LiveServerTest : public ::testing::Test {
 protected:
  void SetUp() override;

  // POST returning (status, parsed body; discarded when not JSON). A
  // read_timeout_s_ above 0 replaces the client's default.
  std::pair<int, nlohmann::json> post(const std::string& path, const std::string& body);

  Engine* engine_ = nullptr;
  std::unique_ptr<LiveServer> server_;
  int read_timeout_s_ = 0;
};

// Splits an SSE body into its data payloads ("data: X" -> "X"), in order.
// Comment lines (": ...") are skipped, as clients do.
std::vector<std::string> sse_data_lines(const std::string& body);

// A POST whose response body is handed to `receive` as it arrives; return
// false from it to drop the connection.
httplib::Result post_streaming(httplib::Client& cli, const std::string& path,
                               const nlohmann::json& body,
                               std::function<bool(const char*, size_t)> receive);

// Value of the sample `line_prefix` (e.g. "radixchat_kv_pages{state=\"held\"}")
// in Prometheus text, or -1 when absent.
double metric(const std::string& text, const std::string& line_prefix);

}  // namespace rc::server::testing
