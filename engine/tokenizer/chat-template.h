// Chat templates (docs/architecture.md section 10), rendered in C++ (no jinja): the
// bundled model's "radixchat" format and the families real GGUFs carry. A
// GGUF's tokenizer.chat_template is recognised by distinctive substrings of
// its jinja text (detect() says which ones); the user may name a template
// instead; anything else falls back with a notice the caller shows.
//
// Special-token safety. render_segments() returns the prompt as segments:
// `special` segments are exactly one marker spelling ("<|im_start|>",
// "<|eot_id|>", "[INST]"), `text` segments are everything else, including
// every message's content. render_tokens() turns a special segment into its
// control id and encodes each run of text segments with
// Tokenizer::encode(run, false, /*parse_special=*/false), so text a user typed
// or a client sent ("<|im_end|>") stays text and cannot close a turn. For
// content without special spellings the ids equal encode(render(), false,
// true): a run of text between two markers is encoded in one piece either
// way. A marker the vocabulary does not have is encoded as text (as before).
// Markers a vocabulary makes USER_DEFINED (the bundled model's <|end|>) are
// matched by the tokenizer even in text, so a text run that spells one of
// the prompt's markers gets that spelling encoded byte by byte instead.
//
// Stability (what makes multi-turn chat hit the cache): every message is
// rendered from itself and what precedes it, and the assistant prompt is the
// opening of the assistant message, so the rendering of a conversation with
// the assistant prompt is a prefix of the rendering of that conversation plus
// the reply and a new user turn; tokens too, because turns end in markers.
// Two documented exceptions follow the real templates: qwen3 and deepseek-r1
// drop an earlier reply's <think> block from the history (the prompt is
// still a prefix; the cached reasoning tokens are not reused), and
// deepseek-r1's assistant prompt "<｜Assistant｜><think>\n" is replaced by
// "<｜Assistant｜>" + answer once the reply is history.
//
// Formats (S system, U user, A assistant, [..] optional; "prompt" = the
// assistant opening added for generation). Sources: the jinja texts stored
// in tests/engine/tokenizer/chat-template-fixtures.cpp, hand-derived.
//   radixchat   <s>[<|system|>\nS<|end|>\n]<|user|>\nU<|end|>\n<|assistant|>\nA<|end|>\n
//   zephyr      <s>[<|system|>\nS</s>\n]<|user|>\nU</s>\n<|assistant|>\nA</s>\n
//   phi3        [<|system|>\nS<|end|>\n]<|user|>\nU<|end|>\n<|assistant|>\nA<|end|>\n
//               (Phi-3.5-mini; S only when non-empty; no trailing <|endoftext|>
//               without the prompt, so a warmed-up system prompt is a prefix)
//   llama2      <s>[INST] [<<SYS>>\nS\n<</SYS>>\n\n]U [/INST] A </s><s>[INST] ...
//   mistral     <s>[INST] [S\n\n]U [/INST]A</s>[INST] U2 [/INST]      (v0.1/v0.2)
//   mistral-v3  <s>[INST] [S\n\n]U[/INST] A</s>[INST] U2[/INST]       (v0.3; A trimmed)
//               (S joins the first user turn; v0.3's jinja puts it on the
//               last one, which would change the prefix every turn)
//   chatml      [<|im_start|>system\nS<|im_end|>\n]<|im_start|>user\nU<|im_end|>\n
//               <|im_start|>assistant\nA<|im_end|>\n; with the template's
//               default system prompt when it has one (Qwen2, Qwen2.5)
//   qwen3       chatml without a default system prompt; A is split at
//               </think>: earlier replies keep only the answer (lstrip "\n"),
//               a reply after the last user message keeps
//               "<think>\nR\n</think>\n\n" + answer
//   llama3      <|begin_of_text|>[<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>]
//               <|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|>... (content trimmed)
//   llama3.1    as llama3, with an always-present system block opening
//               "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n"
//               (the jinja's fixed fallback date: a clock date would change
//               the cached prefix every day)
//   deepseek-r1 <｜begin▁of▁sentence｜>S<｜User｜>U<｜Assistant｜>A'<｜end▁of▁sentence｜>
//               (A' = A after its last </think>); prompt <｜Assistant｜><think>\n
//   gemma       <bos><start_of_turn>user\n[S\n\n]U<end_of_turn>\n<start_of_turn>model\nA
//               <end_of_turn>\n (content trimmed; S joins the first user turn, as
//               Gemma 3 does; Gemma 2's jinja refuses a system message)
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/gguf-reader.h"
#include "radixchat/status.h"
#include "tokenizer.h"

namespace rc::tok {

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

enum class ChatFormat {
  radixchat,
  llama2,
  zephyr,
  chatml,
  llama3,
  llama31,
  qwen3,
  mistral,
  mistral_v3,
  deepseek_r1,
  gemma,
  phi3
};

// One piece of a rendered prompt (see the header comment). `ids` segments
// are never made by the renderers: render_tokens_exact() (chat-exact.h) puts
// a reply's generated ids in place of its text; `text` then holds that text.
struct ChatSegment {
  enum class Kind { text, special, ids };
  Kind kind = Kind::text;
  std::string text;
  std::vector<int32_t> ids = {};  // Kind::ids only: used as given
};

// What detect() found: the format and the substrings that decided it.
struct ChatDetection {
  ChatFormat format;
  std::string evidence;        // e.g. "'<|im_start|>' and '</think>'"
  std::string default_system;  // chatml: the template's own system prompt, if any
};

class ChatTemplate {
 public:
  explicit ChatTemplate(ChatFormat format, std::string source = "named")
      : format_(format), source_(std::move(source)) {}

  // By name (see names_list()). invalid_argument listing the names otherwise.
  static Result<ChatTemplate> by_name(std::string_view name);
  // Recognises a jinja chat template; nullopt when it matches none.
  static std::optional<ChatDetection> detect_with_evidence(std::string_view jinja);
  static std::optional<ChatFormat> detect(std::string_view jinja);
  // The template for a model: `override_name` when non-empty; else the GGUF's
  // tokenizer.chat_template when recognised; else a guess from the
  // vocabulary's special tokens (tok may be null); else chatml (llama.cpp's
  // fallback too). source() says which, detail() how, notice() is set when
  // the model's own template was not recognised.
  static Result<ChatTemplate> for_model(const model::GgufFile* file, const Tokenizer* tok,
                                        std::string_view override_name = {});
  // "radixchat, llama2, ..."
  static const char* names_list();

  ChatFormat format() const { return format_; }
  const char* name() const;
  // How it was chosen: "named", "tokenizer.chat_template", "vocabulary", "default".
  const std::string& source() const { return source_; }
  // One line: "qwen3 (from tokenizer.chat_template: '<|im_start|>' and '</think>')".
  std::string detail() const;
  // Empty, or a line for the user: the model's template was not recognised
  // (or there was none) and this one is used instead.
  const std::string& notice() const { return notice_; }
  // Whether replies open with a <think> reasoning block (qwen3, deepseek-r1).
  bool reasoning() const;
  // The template's own system prompt used when a conversation has none.
  const std::string& default_system() const { return default_system_; }
  void set_default_system(std::string s) { default_system_ = std::move(s); }

  // invalid_argument for an unknown role, or (llama2) a system message that
  // is not the first message.
  Result<std::vector<ChatSegment>> render_segments(std::span<const ChatMessage> messages,
                                                   bool add_assistant_prompt) const;
  // The segments concatenated (for display and tests).
  Result<std::string> render(std::span<const ChatMessage> messages,
                             bool add_assistant_prompt) const;
  // For any message type with .role and .content (e.g. rc::ChatMessage).
  template <typename Msg>
  Result<std::string> render(const std::vector<Msg>& messages, bool add_assistant_prompt) const {
    const std::vector<ChatMessage> m = convert(messages);
    return render(std::span<const ChatMessage>(m), add_assistant_prompt);
  }
  template <typename Msg>
  static std::vector<ChatMessage> convert(const std::vector<Msg>& messages) {
    std::vector<ChatMessage> m;
    m.reserve(messages.size());
    for (const Msg& x : messages) m.push_back({x.role, x.content});
    return m;
  }
  // The spelling that closes an assistant turn ("<|end|>", "</s>", ...): a
  // stop string for generation, and what to append after a generated reply.
  std::string_view end_of_turn() const;
  // A jinja template text that detect() maps back to this format (for GGUF
  // writers that need tokenizer.chat_template).
  std::string_view reference_jinja() const;

 private:
  ChatFormat format_;
  std::string source_;
  std::string evidence_;
  std::string notice_;
  std::string default_system_;
};

// render_segments(), then markers as control ids and text runs encoded with
// parse_special=false (see the header comment); an ids segment ends the text
// run before it and is copied as is.
Result<std::vector<int32_t>> encode_segments(const Tokenizer& tok,
                                             std::span<const ChatSegment> segments);
Result<std::vector<int32_t>> render_tokens(const ChatTemplate& tmpl, const Tokenizer& tok,
                                           std::span<const ChatMessage> messages,
                                           bool add_assistant_prompt);

}  // namespace rc::tok
