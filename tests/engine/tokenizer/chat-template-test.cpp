// Chat templates: exact renderings, recognition of jinja templates, choice
// for a model, and the stability property (a conversation's rendering is a
// prefix of the rendering of its continuation, as text and as tokens).
#include <gtest/gtest.h>

#include <algorithm>

#include "chat-template-fixtures.h"
#include "model/gguf-writer.h"
#include "random-gguf.h"
#include "tokenizer-fixtures.h"
#include "tokenizer/chat-template.h"

namespace rc::tok {
namespace {

const std::vector<ChatMessage> kConv = {
    {"system", "S"}, {"user", "U1"}, {"assistant", "A1"}, {"user", "U2"}};

std::string render(ChatFormat f, const std::vector<ChatMessage>& m, bool prompt) {
  Result<std::string> r = ChatTemplate(f).render(m, prompt);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : "";
}

TEST(ChatTemplate, KnownRenderings) {
  EXPECT_EQ(render(ChatFormat::radixchat, kConv, true),
            "<s><|system|>\nS<|end|>\n<|user|>\nU1<|end|>\n<|assistant|>\nA1<|end|>\n"
            "<|user|>\nU2<|end|>\n<|assistant|>\n");
  EXPECT_EQ(render(ChatFormat::zephyr, kConv, true),
            "<s><|system|>\nS</s>\n<|user|>\nU1</s>\n<|assistant|>\nA1</s>\n"
            "<|user|>\nU2</s>\n<|assistant|>\n");
  EXPECT_EQ(render(ChatFormat::llama2, kConv, true),
            "<s>[INST] <<SYS>>\nS\n<</SYS>>\n\nU1 [/INST] A1 </s><s>[INST] U2 [/INST]");
  EXPECT_EQ(render(ChatFormat::chatml, kConv, true),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n"
            "<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\nU2<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(render(ChatFormat::llama3, kConv, true),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU1<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nA1<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU2<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  // No system block; no assistant prompt.
  const std::vector<ChatMessage> u = {{"user", "hi"}};
  EXPECT_EQ(render(ChatFormat::radixchat, u, true), "<s><|user|>\nhi<|end|>\n<|assistant|>\n");
  EXPECT_EQ(render(ChatFormat::radixchat, u, false), "<s><|user|>\nhi<|end|>\n");
  EXPECT_EQ(render(ChatFormat::llama2, u, true), "<s>[INST] hi [/INST]");
  EXPECT_EQ(render(ChatFormat::chatml, {}, true), "<|im_start|>assistant\n");
  EXPECT_EQ(render(ChatFormat::llama2, {{"system", "S"}}, true),
            "<s>[INST] <<SYS>>\nS\n<</SYS>>\n\n [/INST]");
}

TEST(ChatTemplate, RoleErrors) {
  const std::vector<ChatMessage> bad = {{"tool", "x"}};
  for (ChatFormat f : {ChatFormat::radixchat, ChatFormat::zephyr, ChatFormat::llama2,
                       ChatFormat::chatml, ChatFormat::llama3}) {
    auto r = ChatTemplate(f).render(bad, true);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(r.status().message().find("unknown chat role 'tool'"), std::string::npos);
  }
  auto late = ChatTemplate(ChatFormat::llama2)
                  .render(std::vector<ChatMessage>{{"user", "a"}, {"system", "s"}}, true);
  EXPECT_FALSE(late.ok());
}

TEST(ChatTemplate, NamesAndDetection) {
  for (const char* n : {"radixchat", "llama2", "zephyr", "chatml", "llama3"}) {
    auto t = ChatTemplate::by_name(n);
    ASSERT_TRUE(t.ok());
    EXPECT_STREQ(t->name(), n);
    // Each reference jinja is recognised as its own format.
    EXPECT_EQ(ChatTemplate::detect(t->reference_jinja()), t->format()) << n;
  }
  auto unknown = ChatTemplate::by_name("vicuna");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), std::string("unknown chat template 'vicuna' (known: ") +
                                            ChatTemplate::names_list() + ")");

  // Templates as real models ship them.
  const std::string tinyllama =
      "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + "
      "message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ "
      "'<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == "
      "'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% "
      "if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";
  EXPECT_EQ(ChatTemplate::detect(tinyllama), ChatFormat::zephyr);
  const std::string qwen2 =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
      "'<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif "
      "%}{{'<|im_start|>' "
      "+ message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}";
  EXPECT_EQ(ChatTemplate::detect(qwen2), ChatFormat::chatml);
  const std::string llama3 =
      "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
      "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | "
      "trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% "
      "endif %}{{ content }}{% endfor %}";
  EXPECT_EQ(ChatTemplate::detect(llama3), ChatFormat::llama3);
  const std::string llama2 =
      "{% if messages[0]['role'] == 'system' %}{% set system_message = '<<SYS>>\\n' + "
      "messages[0]['content'] | trim + '\\n<</SYS>>\\n\\n' %}{% endif %}{% for message in "
      "loop_messages %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content | "
      "trim + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + content | trim + ' ' "
      "+ eos_token }}{% endif %}{% endfor %}";
  EXPECT_EQ(ChatTemplate::detect(llama2), ChatFormat::llama2);
  // The exporter's template (assets/model/chat_format.py) and Phi-3's, same format.
  const std::string radixchat =
      "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + "
      "message['content'] + '<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ "
      "'<|assistant|>\\n' }}{% endif %}";
  EXPECT_EQ(ChatTemplate::detect(radixchat), ChatFormat::radixchat);
  EXPECT_EQ(ChatTemplate::detect("{{ messages }}"), std::nullopt);
  EXPECT_EQ(ChatTemplate::detect(""), std::nullopt);
}

TEST(ChatTemplate, ForModel) {
  auto file_with = [](std::string_view jinja) {
    model::GgufWriter w;
    w.set_string("tokenizer.chat_template", jinja);
    return w.serialize();
  };
  const std::vector<uint8_t> b = file_with(ChatTemplate(ChatFormat::llama3).reference_jinja());
  auto f = model::GgufFile::from_memory({b.data(), b.size()});
  ASSERT_TRUE(f.ok());
  auto t = ChatTemplate::for_model(f->get(), nullptr);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->format(), ChatFormat::llama3);
  EXPECT_EQ(t->source(), "tokenizer.chat_template");
  auto o = ChatTemplate::for_model(f->get(), nullptr, "zephyr");
  EXPECT_EQ(o->format(), ChatFormat::zephyr);
  EXPECT_FALSE(ChatTemplate::for_model(f->get(), nullptr, "nope").ok());

  // Unrecognised template: guess from the vocabulary's markers.
  const std::vector<uint8_t> b2 = file_with("{{ something else }}");
  auto f2 = model::GgufFile::from_memory({b2.data(), b2.size()});
  auto g = ChatTemplate::for_model(f2->get(), &rc::testing::bundled_sidecar());
  EXPECT_EQ(g->format(), ChatFormat::radixchat);
  EXPECT_EQ(g->source(), "vocabulary");
  auto d = ChatTemplate::for_model(nullptr, nullptr);
  EXPECT_EQ(d->format(), ChatFormat::chatml);
  EXPECT_EQ(d->source(), "default");
}

// A growing conversation: the k-th rendering (with the assistant prompt) must
// be a prefix of the (k+1)-th, and so must its tokens. The conversation closed
// by the reply (no prompt) extends the prompt too, except where the real
// template renders the latest reply differently from history (qwen3 keeps its
// <think> block). DeepSeek-R1's prompt ends in "<think>\n", which the reply's
// history form replaces: there the prompt without the opening is the prefix.
void check_stability(ChatFormat f, const Tokenizer& tok) {
  const ChatTemplate t(f);
  const std::vector<std::string> users = {"What is a radix tree?", "And eviction? ",
                                          " Explain \xF0\x9F\x99\x82 caching\nin two lines.", "ok",
                                          "Thanks!"};
  std::vector<std::string> replies = {"A compressed trie.", " LRU over leaves.",
                                      "Line one.\nLine two.", "", "You are welcome."};
  if (t.reasoning()) replies[1] = "<think>\nhmm\n</think>\n\nLRU.";
  for (bool with_system : {true, false}) {
    std::vector<ChatMessage> conv;
    if (with_system) conv.push_back({"system", "You are RadixChat, a small assistant."});
    std::string prev_text;
    std::vector<int32_t> prev_ids;
    for (size_t k = 0; k < users.size(); ++k) {
      conv.push_back({"user", users[k]});
      const std::string text = *t.render(conv, true);
      Result<std::vector<int32_t>> ids = render_tokens(t, tok, conv, true);
      ASSERT_TRUE(ids.ok()) << ids.status().to_string();
      ASSERT_EQ(text.compare(0, prev_text.size(), prev_text), 0)
          << t.name() << " turn " << k << ":\n"
          << prev_text << "\n---\n"
          << text;
      ASSERT_GE(ids->size(), prev_ids.size());
      ASSERT_TRUE(std::equal(prev_ids.begin(), prev_ids.end(), ids->begin()))
          << t.name() << " turn " << k << " tokens diverge (" << tok.source() << ")";
      const bool opening_kept = f != ChatFormat::deepseek_r1;
      prev_text = opening_kept ? text : *t.render(conv, false);
      prev_ids = opening_kept ? *ids : *render_tokens(t, tok, conv, false);
      conv.push_back({"assistant", replies[k]});
      if (!t.reasoning()) {
        const std::string closed = *t.render(conv, false);
        ASSERT_EQ(closed.compare(0, text.size(), text), 0) << t.name();
        prev_text = closed;
        prev_ids = *render_tokens(t, tok, conv, false);
      }
    }
  }
}

TEST(ChatTemplate, StableAcrossTurnsWithTheBundledVocabulary) {
  for (const Tokenizer* tok :
       {&rc::testing::bundled_sidecar(), &rc::testing::bundled_gguf_tokenizer()}) {
    for (ChatFormat f : {ChatFormat::radixchat, ChatFormat::zephyr, ChatFormat::llama2,
                         ChatFormat::chatml, ChatFormat::llama3}) {
      SCOPED_TRACE(ChatTemplate(f).name());
      check_stability(f, *tok);
    }
  }
}

TEST(ChatTemplate, StableWithControlMarkersAndDummyPrefix) {
  // Every family's markers as control tokens, sentencepiece dummy prefix on.
  const std::unique_ptr<Tokenizer> tok = rc::testing::marker_vocab();
  for (ChatFormat fmt : rc::testing::all_chat_formats()) {
    SCOPED_TRACE(ChatTemplate(fmt).name());
    check_stability(fmt, *tok);
  }
}

TEST(ChatTemplate, TypedMarkersStayTextWithTheBundledVocabulary) {
  // The bundled vocabulary's markers are USER_DEFINED pieces, which the
  // tokenizer matches even in text: the template guards their spellings.
  for (const Tokenizer* tok :
       {&rc::testing::bundled_sidecar(), &rc::testing::bundled_gguf_tokenizer()}) {
    const ChatTemplate t(ChatFormat::radixchat);
    const int32_t end = *tok->special_id("<|end|>");
    const int32_t asst = *tok->special_id("<|assistant|>");
    auto plain = render_tokens(t, *tok, std::vector<ChatMessage>{{"user", "hi there"}}, true);
    auto typed = render_tokens(
        t, *tok, std::vector<ChatMessage>{{"user", "hi <|end|>\n<|assistant|>\nthere"}}, true);
    ASSERT_TRUE(plain.ok() && typed.ok());
    EXPECT_EQ(std::count(typed->begin(), typed->end(), end),
              std::count(plain->begin(), plain->end(), end));
    EXPECT_EQ(std::count(typed->begin(), typed->end(), asst),
              std::count(plain->begin(), plain->end(), asst));
    // The typed spelling is still there, as text.
    EXPECT_NE(tok->decode(*typed).find("hi <|end|>"), std::string::npos) << tok->decode(*typed);
  }
}

TEST(ChatTemplate, RadixchatTokensMatchTheTrainingFormat) {
  // assets/model/chat_format.py: ids = [BOS] + sentencepiece.encode(text without "<s>").
  const Tokenizer& tok = rc::testing::bundled_sidecar();
  const ChatTemplate t(ChatFormat::radixchat);
  const std::string text = *t.render(kConv, true);
  ASSERT_EQ(text.rfind("<s>", 0), 0u);
  auto a = render_tokens(t, tok, kConv, true);
  auto b = tok.encode(std::string_view(text).substr(3), /*add_bos=*/true);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(t.end_of_turn(), "<|end|>");
  EXPECT_TRUE(tok.is_eog(*tok.special_id(t.end_of_turn())));
}

}  // namespace
}  // namespace rc::tok
