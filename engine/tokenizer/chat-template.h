// Chat templates (design.md section 4): the bundled model's "radixchat"
// format, Llama-2 [INST], Zephyr, ChatML and Llama-3, rendered in C++ (no
// jinja). A GGUF's tokenizer.chat_template is recognised by distinctive
// substrings of its jinja text; the user may name a template instead.
//
// Rendered text carries the model's special spellings ("<s>", "<|end|>",
// "<|begin_of_text|>"); encode it with Tokenizer::encode(text, /*add_bos=*/
// false, /*parse_special=*/true) -- the template already places BOS.
//
// Stability (what makes multi-turn chat hit the cache): every message is
// rendered by itself, independent of what follows, and the assistant prompt
// is exactly the opening of the assistant message. So rendering a
// conversation with add_assistant_prompt, then the same conversation plus the
// assistant's reply and a new user turn, gives the first text as an exact
// prefix; tokens too, because every turn ends in a special token (or a
// newline/space boundary that no sentencepiece piece crosses).
//
// Formats (S = system, U = user, A = assistant reply, [..] optional):
//   radixchat  <s>[<|system|>\nS<|end|>\n]<|user|>\nU<|end|>\n<|assistant|>\nA<|end|>\n
//   zephyr     <s>[<|system|>\nS</s>\n]<|user|>\nU</s>\n<|assistant|>\nA</s>\n
//   llama2     <s>[INST] [<<SYS>>\nS\n<</SYS>>\n\n]U [/INST] A </s><s>[INST] ...
//   chatml     [<|im_start|>system\nS<|im_end|>\n]<|im_start|>user\nU<|im_end|>\n
//              <|im_start|>assistant\nA<|im_end|>\n
//   llama3     <|begin_of_text|>[<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>]
//              <|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|>...
// The assistant prompt is the assistant opening: "<|assistant|>\n",
// "<|im_start|>assistant\n", "<|start_header_id|>assistant<|end_header_id|>\n\n";
// for llama2 it is empty (the user turn already ends in "[/INST]").
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

enum class ChatFormat { radixchat, llama2, zephyr, chatml, llama3 };

class ChatTemplate {
 public:
  explicit ChatTemplate(ChatFormat format, std::string source = "named")
      : format_(format), source_(std::move(source)) {}

  // By name: radixchat, llama2, zephyr, chatml, llama3. invalid_argument
  // listing the names otherwise.
  static Result<ChatTemplate> by_name(std::string_view name);
  // Recognises a jinja chat template; nullopt when it matches none.
  static std::optional<ChatFormat> detect(std::string_view jinja);
  // The template for a model: `override_name` when non-empty; else the GGUF's
  // tokenizer.chat_template when recognised; else a guess from the
  // vocabulary's special tokens (tok may be null); else chatml (llama.cpp's
  // fallback too). source() says which.
  static Result<ChatTemplate> for_model(const model::GgufFile* file, const Tokenizer* tok,
                                        std::string_view override_name = {});
  // "radixchat, llama2, zephyr, chatml, llama3"
  static const char* names_list();

  ChatFormat format() const { return format_; }
  const char* name() const;
  // How it was chosen: "named", "tokenizer.chat_template", "vocabulary", "default".
  const std::string& source() const { return source_; }

  // invalid_argument for an unknown role, or (llama2) a system message that
  // is not the first message.
  Result<std::string> render(std::span<const ChatMessage> messages,
                             bool add_assistant_prompt) const;
  // For any message type with .role and .content (e.g. rc::ChatMessage).
  template <typename Msg>
  Result<std::string> render(const std::vector<Msg>& messages, bool add_assistant_prompt) const {
    std::vector<ChatMessage> m;
    m.reserve(messages.size());
    for (const Msg& x : messages) m.push_back({x.role, x.content});
    return render(std::span<const ChatMessage>(m), add_assistant_prompt);
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
};

// render() then Tokenizer::encode(text, false, true).
Result<std::vector<int32_t>> render_tokens(const ChatTemplate& tmpl, const Tokenizer& tok,
                                           std::span<const ChatMessage> messages,
                                           bool add_assistant_prompt);

}  // namespace rc::tok
