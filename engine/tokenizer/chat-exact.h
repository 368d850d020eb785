// Token-exact chat history (docs/architecture.md section 10).
//
// A reply is generated as ids, shown as text, and comes back as text in the
// next turn's history. Encoding that text again need not give the ids that
// were generated (a sampled reply often is not the tokenizer's canonical
// split: "Hel" + "lo" where encode gives "Hello"), and the cached reply then
// stops matching at its first differing id. render_tokens_exact() puts a
// reply whose generated ids are known back into the prompt as those ids, so
// the next prompt starts with exactly the tokens the cache holds.
//
// When the ids are used: the message is an assistant message, its ids
// stream to exactly its content (reply_text), and the template renders that
// content verbatim (checked by rendering the conversation with a placeholder
// in its place: a template that trims or rewrites the content, such as
// qwen3 dropping an old reply's <think> block, renders the placeholder
// differently, and that reply is encoded as text as before), followed by a
// marker (llama2's " A " is not: its trailing space would be encoded
// apart from the reply, so llama2 replies stay text). The prompt's
// text is the same either way; only the split of the reply into ids
// differs. The ids replace exactly the content: the template text around it
// is encoded on its own, as the assistant opening was when the reply was
// generated, so the prompt that generated the reply is a prefix of the next
// one.
//
// Thread safety: pure functions over immutable inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chat-template.h"
#include "radixchat/status.h"
#include "tokenizer.h"

namespace rc::tok {

// The text a reply of `ids` streamed (StreamDecoder pushes, as the
// scheduler streams them). nullopt when the ids cannot stand for that text
// exactly: an id outside the vocabulary, an end-of-generation piece at the
// end (it ends the turn, which the template closes itself), or an
// incomplete UTF-8 character at the end. Control pieces a model sampled
// mid-reply (a stray BOS, or an end-of-generation piece a request with
// ignore_eos went past) stream no text but stay in the ids: they are what
// the cache holds, and the ids come from the generation, never from the text.
std::optional<std::string> reply_text(const Tokenizer& tok, std::span<const int32_t> ids);

struct ExactRender {
  std::vector<int32_t> tokens;
  int spliced = 0;  // assistant messages put in as their ids
};

// render_tokens() with the rule above. `ids` is empty or has one entry per
// message (an empty entry: not known). Errors: as render_tokens().
Result<ExactRender> render_tokens_exact(const ChatTemplate& tmpl, const Tokenizer& tok,
                                        std::span<const ChatMessage> messages,
                                        std::span<const std::span<const int32_t>> ids,
                                        bool add_assistant_prompt);

}  // namespace rc::tok
