// The streamed body of an OpenAI-compatible /v1/chat/completions reply
// (vLLM, SGLang, RadixChat's own `serve`, ...), read as it arrives:
// server-sent events ("data: {chunk}" separated by blank lines, ": comment"
// lines, "data: [DONE]" at the end), each chunk's choices[0].delta.content
// (and reasoning_content, which vLLM/SGLang reasoning parsers send apart:
// it is wrapped in <think>...</think> so the chat shows it as it shows a
// local model's), the finish_reason and the usage chunk.
//
// Malformed input (a chunk that is not a JSON object, a wrong type, an
// event larger than kMaxEventBytes, an {"error": ...} chunk) stops the
// parse with one reason in error(); nothing after it is applied. Bytes
// after [DONE] are ignored. Pure logic, no network: the client feeds it.
#pragma once

#include <QByteArray>
#include <QString>

namespace rc::gui {

class OpenAiStream {
 public:
  static constexpr qsizetype kMaxEventBytes = 1 << 20;

  // Applies every complete event in `bytes` (plus what earlier calls left
  // pending). False once the stream is malformed (see error()).
  bool feed(const QByteArray& bytes);

  // Text that arrived since the last call (content, <think> markers).
  QString takeText();

  bool done() const { return done_; }  // "data: [DONE]" seen
  bool failed() const { return !error_.isEmpty(); }
  const QString& error() const { return error_; }
  // The choice's finish_reason ("stop", "length", ...), "" until one came.
  const QString& finishReason() const { return finish_; }
  int chunks() const { return chunks_; }  // JSON chunks applied

  // From the usage object, when the server sent one (stream_options).
  bool hasUsage() const { return hasUsage_; }
  int promptTokens() const { return prompt_; }
  int cachedTokens() const { return cached_; }  // prompt_tokens_details.cached_tokens
  int completionTokens() const { return completion_; }

 private:
  void event(const QByteArray& data);
  void chunk(const QByteArray& json);
  void fail(const QString& why);

  QByteArray pending_;  // bytes of an event not yet complete
  QByteArray data_;     // data lines of the current event
  bool hasData_ = false;
  QString text_;
  bool inThink_ = false;
  bool done_ = false;
  QString error_;
  QString finish_;
  int chunks_ = 0;
  bool hasUsage_ = false;
  int prompt_ = 0, cached_ = 0, completion_ = 0;
};

}  // namespace rc::gui
