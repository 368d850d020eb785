// The chat on a remote OpenAI-compatible server ("Connect to a
// server..."). Three layers:
//   - OpenAiStream, the SSE reader: the same result for every way the bytes
//     can be split, every malformed input refused with one reason, seeded
//     mutations never crash it;
//   - ChatController + RemoteChatClient against fake-openai-server.py:
//     what the client sends (key, model, stream, include_usage, roles), the
//     usage figures taken over, and each failure (bad key, unreachable,
//     unknown model, malformed JSON, wrong type, cut stream, HTTP 500)
//     shown once with the text that arrived kept and the conversation
//     still usable;
//   - a real `radixchat-cli serve` started here: the streamed reply equals
//     the server's own non-streamed answer (greedy), the second turn reports
//     cached prompt tokens, stop keeps the text, and the main window's
//     "Connect to a server" attaches the panel to the server's cache events.
#include <gtest/gtest.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>

#include "chat-controller.h"
#include "chat-test-util.h"
#include "chat/engine-host.h"
#include "main-window.h"
#include "openai-stream.h"
#include "panel/cache-panel.h"
#include "remote-chat-client.h"
#include "require-test-model.h"

using namespace rc::gui;
using rc::test::waitUntil;

namespace {

// ---------------------------------------------------------------- the parser

const QByteArray kGoodStream =
    ": keep-alive\r\n\r\n"
    "event: message\r\n"
    "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"},\"finish_reason\":null}]}\r\n\r\n"
    "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\r\r"
    "data: {\"choices\":[{\"delta\":{\"content\":\"lo \\u00e9\"},\"finish_reason\":\"length\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":2,"
    "\"prompt_tokens_details\":{\"cached_tokens\":16}}}\n\n"
    "data: [DONE]\n\n"
    "data: {\"after\": \"done is ignored\"\n\n";

struct Parsed {
  QString text, finish, error;
  bool done = false;
  int prompt = -1, cached = -1, completion = -1;
  bool operator==(const Parsed&) const = default;
};

Parsed parseInPieces(const QByteArray& bytes, const std::vector<qsizetype>& cuts) {
  OpenAiStream s;
  Parsed p;
  qsizetype at = 0;
  for (qsizetype c : cuts) {
    s.feed(bytes.mid(at, c - at));
    p.text += s.takeText();
    at = c;
  }
  s.feed(bytes.mid(at));
  p.text += s.takeText();
  p.finish = s.finishReason();
  p.error = s.error();
  p.done = s.done();
  if (s.hasUsage()) {
    p.prompt = s.promptTokens();
    p.cached = s.cachedTokens();
    p.completion = s.completionTokens();
  }
  return p;
}

TEST(OpenAiStream, ReadsChunksUsageAndDone) {
  const Parsed p = parseInPieces(kGoodStream, {});
  EXPECT_EQ(p.error, QString());
  EXPECT_EQ(p.text, QStringLiteral("<think>hmm</think>Hello é"));
  EXPECT_EQ(p.finish, QStringLiteral("length"));
  EXPECT_TRUE(p.done);
  EXPECT_EQ(p.prompt, 20);
  EXPECT_EQ(p.cached, 16);
  EXPECT_EQ(p.completion, 2);
}

TEST(OpenAiStream, SameResultForEverySplit) {
  const Parsed whole = parseInPieces(kGoodStream, {});
  for (qsizetype i = 1; i < kGoodStream.size(); ++i)
    ASSERT_EQ(parseInPieces(kGoodStream, {i}), whole) << "split at byte " << i;
  // Byte by byte.
  std::vector<qsizetype> each;
  for (qsizetype i = 1; i < kGoodStream.size(); ++i) each.push_back(i);
  EXPECT_EQ(parseInPieces(kGoodStream, each), whole);
}

TEST(OpenAiStream, RefusesMalformedInputWithOneReasonAndKeepsEarlierText) {
  const QByteArray ok = "data: {\"choices\":[{\"delta\":{\"content\":\"kept\"}}]}\n\n";
  const std::vector<std::pair<QByteArray, QString>> bad = {
      {"data: {not json\n\n", "not a JSON object"},
      {"data: [1,2]\n\n", "not a JSON object"},
      {"data: {\"choices\":{}}\n\n", "wrong type"},
      {"data: {\"choices\":[7]}\n\n", "wrong type"},
      {"data: {\"choices\":[{\"delta\":\"x\"}]}\n\n", "wrong type"},
      {"data: {\"choices\":[{\"delta\":{\"content\":42}}]}\n\n", "wrong type"},
      {"data: {\"choices\":[{\"finish_reason\":1}]}\n\n", "wrong type"},
      {"data: {\"usage\":{\"prompt_tokens\":\"many\"}}\n\n", "usage"},
      {"data: {\"usage\":{\"prompt_tokens\":-3}}\n\n", "usage"},
      {"data: {\"usage\":5}\n\n", "wrong type"},
      {"data: {\"error\":{\"message\":\"overloaded\"}}\n\n", "the server reported: overloaded"},
      {"data: " + QByteArray(OpenAiStream::kMaxEventBytes + 10, 'x') + "\n\n", "over 1 MiB"},
      {QByteArray(OpenAiStream::kMaxEventBytes + 10, 'x'), "over 1 MiB"},
  };
  for (const auto& [tail, why] : bad) {
    OpenAiStream s;
    s.feed(ok);
    EXPECT_EQ(s.takeText(), QStringLiteral("kept"));
    EXPECT_FALSE(s.feed(tail)) << tail.left(60).toStdString();
    EXPECT_TRUE(s.error().contains(why)) << s.error().toStdString();
    // Nothing after a failure is applied.
    s.feed(ok);
    EXPECT_EQ(s.takeText(), QString());
  }
}

TEST(OpenAiStream, SeededMutationsNeverCrash) {
  QRandomGenerator rng(18);
  int failed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    QByteArray b = kGoodStream;
    const int edits = 1 + int(rng.bounded(4));
    for (int e = 0; e < edits && !b.isEmpty(); ++e) {
      const qsizetype at = qsizetype(rng.bounded(quint32(b.size())));
      switch (rng.bounded(4)) {
        case 0: b[at] = char(rng.bounded(256)); break;
        case 1: b.truncate(at); break;
        case 2: b.insert(at, char("{}[]\":,\n\r"[rng.bounded(9)])); break;
        default: b.remove(at, 1 + qsizetype(rng.bounded(8))); break;
      }
    }
    std::vector<qsizetype> cuts;
    for (qsizetype c = 1; c < b.size(); c += 1 + qsizetype(rng.bounded(40))) cuts.push_back(c);
    const Parsed p = parseInPieces(b, cuts);
    if (!p.error.isEmpty()) ++failed;
    EXPECT_FALSE(!p.error.isEmpty() && p.done) << "a failed stream cannot also be complete";
  }
  EXPECT_GT(failed, 100) << "mutations should often be refused";
}

// ------------------------------------------------------------ the processes

// A child process that prints its port first (fake server or serve).
class Child {
 public:
  Child(const QString& program, const QStringList& args, const QRegularExpression& portLine) {
    proc_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    proc_.start(program, args);
    if (!proc_.waitForStarted(10000)) {
      error_ = program + QStringLiteral(" did not start: ") + proc_.errorString();
      return;
    }
    QByteArray out;
    while (proc_.waitForReadyRead(60000)) {
      out += proc_.readAll();
      const auto m = portLine.match(QString::fromUtf8(out));
      if (m.hasMatch()) {
        port_ = m.captured(1).toInt();
        return;
      }
    }
    error_ = program + QStringLiteral(" printed no port: ") + QString::fromUtf8(out);
  }
  ~Child() {
    if (proc_.state() == QProcess::NotRunning) return;
    proc_.terminate();
    if (!proc_.waitForFinished(10000)) {
      proc_.kill();
      proc_.waitForFinished(5000);
    }
  }
  int port() const { return port_; }
  const QString& error() const { return error_; }
  QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(port_); }

 private:
  QProcess proc_;
  int port_ = 0;
  QString error_;
};

int closedPort() {
  QTcpServer s;
  if (!s.listen(QHostAddress::LocalHost, 0)) return 1;
  const int port = s.serverPort();
  s.close();
  return port;
}

// The controller on a temporary database, with no local model loaded: the
// remote client is its only model.
class RemoteChatFixture : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    auto store = rc::store::StoreThread::open(dir_.filePath("chat.db").toStdString());
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    store_ = std::move(store.value());
    host_ = std::make_unique<rc::ui::EngineHost>();
    controller_ = std::make_unique<ChatController>(store_.get(), host_.get());
    QSignalSpy started(controller_.get(), &ChatController::conversationChanged);
    controller_->start();
    ASSERT_TRUE(waitUntil([&] { return started.count() > 0; }, 10000));
    ChatSampling s;
    s.temperature = 0;
    s.maxTokens = 24;
    controller_->setSampling(s);
    client_ = std::make_unique<RemoteChatClient>();
  }
  void TearDown() override {
    controller_.reset();
    client_.reset();
    host_.reset();
    store_.reset();
  }

  // "" when connected, else the reason.
  QString connectTo(const QString& url, const QString& key, const QString& model) {
    QSignalSpy ok(client_.get(), &RemoteChatClient::connected);
    QSignalSpy failed(client_.get(), &RemoteChatClient::connectFailed);
    client_->connectTo({url, key, model});
    if (!waitUntil([&] { return ok.count() + failed.count() > 0; }, 20000)) return "timeout";
    EXPECT_EQ(ok.count() + failed.count(), 1);
    return failed.isEmpty() ? QString() : failed.at(0).at(0).toString();
  }

  struct Finished {
    qint64 id = 0;
    rc::ui::ReplyMetrics metrics;
    QString error;
    int finishes = 0;
    int errors = 0;  // errorOccurred signals meanwhile
  };
  Finished sendAndWait(const QString& text) {
    QSignalSpy stored(controller_.get(), &ChatController::replyStored);
    QSignalSpy finished(controller_.get(), &ChatController::replyFinished);
    QSignalSpy errors(controller_.get(), &ChatController::errorOccurred);
    controller_->send(text);
    EXPECT_TRUE(waitUntil([&] { return stored.count() > 0; }, 120000)) << "no reply stored";
    QTest::qWait(100);  // a second finish, if any, would arrive meanwhile
    Finished f;
    f.finishes = int(finished.count());
    f.errors = int(errors.count());
    if (!finished.isEmpty()) {
      f.id = finished.at(0).at(0).toLongLong();
      f.metrics = finished.at(0).at(1).value<rc::ui::ReplyMetrics>();
      f.error = finished.at(0).at(2).toString();
    }
    return f;
  }

  // The reply as saved in the store.
  rc::store::Message stored(qint64 id) {
    auto m = store_->submit([id](rc::store::Store& s) { return s.get_message(id); }).get();
    EXPECT_TRUE(m.ok());
    return m.ok() ? m.value() : rc::store::Message{};
  }

  const std::vector<rc::ui::ChatMessageRow>& rows() { return controller_->chatModel()->rows(); }

  QTemporaryDir dir_;
  std::unique_ptr<rc::store::StoreThread> store_;
  std::unique_ptr<rc::ui::EngineHost> host_;
  std::unique_ptr<ChatController> controller_;
  std::unique_ptr<RemoteChatClient> client_;
};

// ------------------------------------------------------------ the fake server

class RemoteChatFake : public RemoteChatFixture {
 protected:
  void SetUp() override {
    RemoteChatFixture::SetUp();
    fake_ = std::make_unique<Child>(
        QStringLiteral("python3"),
        QStringList{QStringLiteral(RADIXCHAT_SOURCE_DIR "/tests/app/gui/fake-openai-server.py")},
        QRegularExpression(QStringLiteral("PORT (\\d+)")));
    ASSERT_GT(fake_->port(), 0) << fake_->error().toStdString();
  }
  void TearDown() override {
    RemoteChatFixture::TearDown();
    fake_.reset();
  }
  std::unique_ptr<Child> fake_;
};

TEST_F(RemoteChatFake, SendsTheConversationAndTakesTheUsage) {
  ASSERT_EQ(connectTo(fake_->url() + "/v1/", "sekrit", "fake-ok"), QString());
  controller_->setRemote(client_.get());
  EXPECT_TRUE(controller_->hasModel());
  EXPECT_EQ(controller_->modelName(), QStringLiteral("fake-ok"));
  controller_->setSystemPrompt(QStringLiteral("Be brief."), std::nullopt);
  const Finished f = sendAndWait(QStringLiteral("Hi"));
  EXPECT_EQ(f.finishes, 1);
  EXPECT_EQ(f.error, QString());
  const QString want =
      QStringLiteral("<think>thinking</think>roles=system,user stream=True usage=True max=24");
  ASSERT_EQ(rows().size(), 2u);
  EXPECT_EQ(rows()[1].text, want);
  EXPECT_EQ(f.metrics.promptTokens, 11);
  EXPECT_EQ(f.metrics.cachedTokens, 7);
  EXPECT_EQ(f.metrics.completionTokens, 3);
  EXPECT_EQ(f.metrics.finishReason, QStringLiteral("stop"));
  EXPECT_GE(f.metrics.ttftMs, 0);
  const rc::store::Message m = stored(f.id);
  EXPECT_EQ(QString::fromStdString(m.content), want);
  EXPECT_EQ(m.model, "fake-ok");
  // The second turn carries the whole conversation.
  const Finished g = sendAndWait(QStringLiteral("More"));
  EXPECT_EQ(g.error, QString());
  ASSERT_EQ(rows().size(), 4u);
  EXPECT_TRUE(rows()[3].text.contains("roles=system,user,assistant,user"))
      << rows()[3].text.toStdString();
}

TEST_F(RemoteChatFake, ConnectionFailuresSayWhyOnce) {
  EXPECT_TRUE(connectTo(fake_->url(), "wrong", "").contains("refused the API key (HTTP 401)"));
  EXPECT_FALSE(client_->isConnected());
  EXPECT_TRUE(connectTo(QStringLiteral("http://127.0.0.1:%1").arg(closedPort()), "", "")
                  .contains("connection refused"));
  EXPECT_TRUE(connectTo(fake_->url(), "sekrit", "gpt-9").contains("does not serve 'gpt-9'"));
  EXPECT_TRUE(connectTo(QStringLiteral("tcp://127.0.0.1:5557"), "", "").contains("not an http"));
  EXPECT_FALSE(client_->isConnected());
  // Not connected: the controller refuses to send, with one message.
  controller_->setRemote(client_.get());
  QSignalSpy errors(controller_.get(), &ChatController::errorOccurred);
  controller_->send(QStringLiteral("anyone?"));
  EXPECT_EQ(errors.count(), 1);
  EXPECT_TRUE(rows().empty());
}

TEST_F(RemoteChatFake, BrokenStreamsFailOnceAndKeepTheConversation) {
  const std::vector<std::pair<QString, QString>> cases = {
      {"fake-malformed", "not a JSON object"},
      {"fake-badtype", "wrong type"},
      {"fake-cut", "ended before the reply was complete"},
      {"fake-500", "answered HTTP 500: the GPU caught fire"},
  };
  controller_->setRemote(client_.get());
  size_t expectRows = 0;
  for (const auto& [model, why] : cases) {
    ASSERT_EQ(connectTo(fake_->url(), "sekrit", model), QString());
    const Finished f = sendAndWait(QStringLiteral("Hi ") + model);
    expectRows += 2;
    EXPECT_EQ(f.finishes, 1) << model.toStdString();
    EXPECT_EQ(f.errors, 0) << "the reply's failure is shown with the reply only";
    EXPECT_TRUE(f.error.contains(why)) << model.toStdString() << ": " << f.error.toStdString();
    EXPECT_EQ(f.metrics.finishReason, QStringLiteral("error"));
    const QString kept = model == "fake-500" ? QString() : QStringLiteral("Hello");
    ASSERT_EQ(rows().size(), expectRows);
    EXPECT_EQ(rows().back().text, kept) << model.toStdString();
    EXPECT_EQ(rows().back().error, f.error);
    EXPECT_EQ(QString::fromStdString(stored(f.id).content), kept);
  }
  // The same conversation goes on once the server behaves.
  ASSERT_EQ(connectTo(fake_->url(), "sekrit", "fake-ok"), QString());
  const Finished ok = sendAndWait(QStringLiteral("Again"));
  EXPECT_EQ(ok.error, QString());
  ASSERT_EQ(rows().size(), expectRows + 2);
  EXPECT_TRUE(rows().back().text.contains("roles=user,assistant,user,assistant,user,assistant,"
                                          "user,assistant,user"))
      << rows().back().text.toStdString();
}

// ---------------------------------------------------- a real RadixChat serve

class RemoteChatServe : public RemoteChatFixture {
 protected:
  static void SetUpTestSuite() {
    if (!rc::test::have_test_model()) return;
    serve_ = new Child(QStringLiteral(RADIXCHAT_CLI),
                       {"serve", "--port", "0", "--threads", "2", "--api-key", "k18", "--model",
                        QString::fromStdString(rc::test::test_model_path())},
                       QRegularExpression(QStringLiteral("http://127\\.0\\.0\\.1:(\\d+)/v1")));
  }
  static void TearDownTestSuite() {
    delete serve_;
    serve_ = nullptr;
  }
  void SetUp() override {
    RC_REQUIRE_TEST_MODEL();
    ASSERT_TRUE(serve_ && serve_->port() > 0) << (serve_ ? serve_->error().toStdString() : "");
    RemoteChatFixture::SetUp();
  }

  // The server's own answer, not streamed: the oracle for the streamed text.
  static QString nonStreamed(const QJsonArray& messages, int maxTokens) {
    QNetworkAccessManager net;
    QNetworkRequest req(QUrl(serve_->url() + "/v1/chat/completions"));
    req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    req.setRawHeader("Authorization", "Bearer k18");
    const QJsonObject body{{"messages", messages},
                           {"temperature", 0},
                           {"max_tokens", maxTokens},
                           {"stream", false}};
    QNetworkReply* r = net.post(req, QJsonDocument(body).toJson());
    waitUntil([&] { return r->isFinished(); }, 60000);
    const QJsonObject o = QJsonDocument::fromJson(r->readAll()).object();
    r->deleteLater();
    return o["choices"].toArray().at(0).toObject()["message"].toObject()["content"].toString();
  }
  static Child* serve_;
};
Child* RemoteChatServe::serve_ = nullptr;

TEST_F(RemoteChatServe, StreamsTheServersAnswerAndReportsItsCache) {
  ASSERT_EQ(connectTo(serve_->url(), "k18", ""), QString());
  EXPECT_FALSE(client_->server().model.isEmpty()) << "the listed model is taken";
  controller_->setRemote(client_.get());
  controller_->setSystemPrompt(QString(), std::nullopt);  // the oracle sends the user turn only
  const Finished a = sendAndWait(QStringLiteral("What is a radix tree?"));
  ASSERT_EQ(a.error, QString());
  ASSERT_EQ(rows().size(), 2u);
  const QString first = rows()[1].text;
  EXPECT_FALSE(first.isEmpty());
  EXPECT_EQ(first, nonStreamed(QJsonArray{QJsonObject{{"role", "user"},
                                                      {"content", "What is a radix tree?"}}},
                               24));
  EXPECT_GT(a.metrics.promptTokens, 0);
  EXPECT_EQ(a.metrics.completionTokens, 24);
  EXPECT_EQ(a.metrics.finishReason, QStringLiteral("length"));

  // The follow-up's prompt starts with the first turn: the server's radix
  // cache serves it, and the usage says so.
  const Finished b = sendAndWait(QStringLiteral("And why is it fast?"));
  ASSERT_EQ(b.error, QString());
  EXPECT_GT(b.metrics.cachedTokens, 0);
  EXPECT_GT(b.metrics.promptTokens, b.metrics.cachedTokens);
  EXPECT_GE(b.metrics.cachedTokens, a.metrics.promptTokens / 2);
}

TEST_F(RemoteChatServe, StopKeepsTheTextAndAWrongKeyIsRefused) {
  EXPECT_TRUE(connectTo(serve_->url(), "nope", "").contains("HTTP 401"));
  ASSERT_EQ(connectTo(serve_->url(), "k18", ""), QString());
  controller_->setRemote(client_.get());
  ChatSampling s;
  s.temperature = 0.8f;
  s.maxTokens = 4000;
  controller_->setSampling(s);
  // The small model may end a reply before the stop reaches the server
  // (finish "stop"): try again in a new chat until one is cut.
  bool cancelled = false;
  for (int attempt = 0; attempt < 8 && !cancelled; ++attempt) {
    controller_->newConversation();
    QSignalSpy saved(controller_.get(), &ChatController::replyStored);
    QSignalSpy finished(controller_.get(), &ChatController::replyFinished);
    controller_->send(QStringLiteral("Tell me a long story."));
    ASSERT_TRUE(waitUntil([&] { return rows().size() == 2 && !rows()[1].text.isEmpty(); }, 60000));
    controller_->stop();
    ASSERT_TRUE(waitUntil([&] { return saved.count() > 0; }, 20000));
    ASSERT_EQ(finished.count(), 1);
    const auto metrics = finished.at(0).at(1).value<rc::ui::ReplyMetrics>();
    EXPECT_EQ(finished.at(0).at(2).toString(), QString());
    EXPECT_FALSE(
        QString::fromStdString(stored(finished.at(0).at(0).toLongLong()).content).isEmpty());
    if (metrics.finishReason == QStringLiteral("stop")) continue;  // ended first
    EXPECT_EQ(metrics.finishReason, QStringLiteral("cancelled"));
    cancelled = true;
  }
  EXPECT_TRUE(cancelled) << "no reply was still streaming when Stop was pressed";
}

TEST_F(RemoteChatServe, WindowConnectsChatAndPanelAtOnce) {
  controller_.reset();  // the window has its own
  WindowOptions opt;
  opt.settingsFile = dir_.filePath("settings.ini");
  MainWindow w(store_.get(), opt);
  ServerChoice c;
  c.server = {serve_->url(), "k18", ""};
  c.watchCache = true;  // no KV-events endpoint: the server's /v1/cache/events
  QSignalSpy connected(&w, &MainWindow::serverConnected);
  w.connectToServer(c);
  ASSERT_TRUE(waitUntil([&] { return connected.count() > 0; }, 20000));
  EXPECT_TRUE(w.cachePanel()->remoteAttached());
  EXPECT_EQ(w.controller()->remote(), w.remoteClient());
  EXPECT_TRUE(w.controller()->hasModel());
  QSignalSpy stored(w.controller(), &ChatController::replyStored);
  w.controller()->send(QStringLiteral("Hello there"));
  ASSERT_TRUE(waitUntil([&] { return stored.count() > 0; }, 60000));
  w.useLocalModel();
  EXPECT_FALSE(w.cachePanel()->remoteAttached());
  EXPECT_EQ(w.controller()->remote(), nullptr);
}

}  // namespace
