// Chat templates of the families real GGUFs carry: recognition of their real
// jinja texts (chat-template-fixtures.cpp), renderings hand-derived from those
// jinja texts, the <think> handling of Qwen3 and DeepSeek-R1, the fallback
// notice, and special-token safety (content is tokenized as text).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "chat-template-fixtures.h"
#include "model/gguf-writer.h"
#include "random-gguf.h"
#include "tokenizer/chat-template.h"

namespace rc::tok {
namespace {

std::string render(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool prompt) {
  Result<std::string> r = t.render(m, prompt);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : "";
}
std::string render(ChatFormat f, const std::vector<ChatMessage>& m, bool prompt) {
  return render(ChatTemplate(f), m, prompt);
}

const std::vector<ChatMessage> kConv = {
    {"system", "S"}, {"user", "U1"}, {"assistant", "A1"}, {"user", "U2"}};
const std::vector<ChatMessage> kNoSystem = {{"user", "U1"}, {"assistant", "A1"}, {"user", "U2"}};

TEST(ChatTemplateFamilies, RealTemplatesAreRecognised) {
  for (const rc::testing::RealTemplate& r : rc::testing::real_chat_templates()) {
    SCOPED_TRACE(r.model);
    std::optional<ChatDetection> d = ChatTemplate::detect_with_evidence(r.jinja);
    ASSERT_TRUE(d.has_value());
    EXPECT_STREQ(ChatTemplate(d->format).name(), r.format);
    EXPECT_FALSE(d->evidence.empty());
  }
}

// The chat_template of a model file, as for_model() sees it.
ChatTemplate for_jinja(std::string_view jinja) {
  model::GgufWriter w;
  w.set_string("tokenizer.chat_template", jinja);
  const std::vector<uint8_t> b = w.serialize();
  auto f = model::GgufFile::from_memory({b.data(), b.size()});
  EXPECT_TRUE(f.ok());
  auto t = ChatTemplate::for_model(f->get(), nullptr);
  EXPECT_TRUE(t.ok());
  return *t;
}

const std::string& real(const char* model) {
  for (const auto& r : rc::testing::real_chat_templates()) {
    if (std::string_view(r.model) == model) return r.jinja;
  }
  ADD_FAILURE() << model;
  static const std::string none;
  return none;
}

// Expected strings below are derived by hand from the jinja texts in
// chat-template-fixtures.cpp (add_generation_prompt=true, tools undefined).
TEST(ChatTemplateFamilies, RenderingsMatchTheRealTemplates) {
  const ChatTemplate llama32 = for_jinja(real("Llama-3.2-1B-Instruct"));
  EXPECT_EQ(render(llama32, kConv, true),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nS<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU1<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nA1<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nU2<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  // No system message: the block is still there, empty after the dates; content trimmed.
  EXPECT_EQ(render(llama32, {{"user", "  hi \n"}}, true),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
            "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render(for_jinja(real("Meta-Llama-3-8B-Instruct")), {{"user", " hi "}}, true),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");

  const ChatTemplate qwen25 = for_jinja(real("Qwen2.5-7B-Instruct"));
  EXPECT_EQ(qwen25.default_system(),
            "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.");
  EXPECT_EQ(render(qwen25, {{"user", "U1"}}, true),
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render(qwen25, kConv, true),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n"
            "<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\nU2<|im_end|>\n"
            "<|im_start|>assistant\n");

  EXPECT_EQ(render(for_jinja(real("Mistral-7B-Instruct-v0.1")), kNoSystem, true),
            "<s>[INST] U1 [/INST]A1</s>[INST] U2 [/INST]");
  EXPECT_EQ(render(for_jinja(real("Mistral-7B-Instruct-v0.3")), kNoSystem, true),
            "<s>[INST] U1[/INST] A1</s>[INST] U2[/INST]");
  // Our choice for a system prompt: it opens the first user turn (stable).
  EXPECT_EQ(render(ChatFormat::mistral_v3, kConv, true),
            "<s>[INST] S\n\nU1[/INST] A1</s>[INST] U2[/INST]");

  EXPECT_EQ(render(for_jinja(real("gemma-2-2b-it")), kNoSystem, true),
            "<bos><start_of_turn>user\nU1<end_of_turn>\n<start_of_turn>model\nA1<end_of_turn>\n"
            "<start_of_turn>user\nU2<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(
      render(ChatFormat::gemma, kConv, true),
      "<bos><start_of_turn>user\nS\n\nU1<end_of_turn>\n<start_of_turn>model\nA1<end_of_turn>\n"
      "<start_of_turn>user\nU2<end_of_turn>\n<start_of_turn>model\n");

  const ChatTemplate phi = for_jinja(real("Phi-3.5-mini-instruct"));
  EXPECT_EQ(render(phi, kConv, true),
            "<|system|>\nS<|end|>\n<|user|>\nU1<|end|>\n<|assistant|>\nA1<|end|>\n"
            "<|user|>\nU2<|end|>\n<|assistant|>\n");
  EXPECT_EQ(render(phi, {{"system", ""}, {"user", "U1"}}, true),
            "<|user|>\nU1<|end|>\n<|assistant|>\n");

  EXPECT_EQ(render(for_jinja(real("TinyLlama-1.1B-Chat-v1.0")), {{"user", "U1"}}, true),
            "<s><|user|>\nU1</s>\n<|assistant|>\n");
}

TEST(ChatTemplateFamilies, Qwen3KeepsOnlyTheLatestReasoning) {
  const ChatTemplate q = for_jinja(real("Qwen3"));
  ASSERT_EQ(q.format(), ChatFormat::qwen3);
  EXPECT_TRUE(q.reasoning());
  const std::vector<ChatMessage> conv = {{"system", "S"},
                                         {"user", "U1"},
                                         {"assistant", "<think>\nplan\n</think>\n\nA1"},
                                         {"user", "U2"}};
  // An earlier reply loses its <think> block.
  EXPECT_EQ(render(q, conv, true),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n"
            "<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\nU2<|im_end|>\n"
            "<|im_start|>assistant\n");
  // A reply after the last user message keeps it (and gets an empty one).
  const std::vector<ChatMessage> closed(conv.begin(), conv.begin() + 3);
  EXPECT_EQ(render(q, closed, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU1<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nplan\n</think>\n\nA1<|im_end|>\n");
  EXPECT_EQ(render(q, {{"user", "U1"}, {"assistant", "A1"}}, false),
            "<|im_start|>user\nU1<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
            "A1<|im_end|>\n");
}

TEST(ChatTemplateFamilies, DeepSeekR1DropsReasoningFromHistory) {
  const ChatTemplate r = for_jinja(real("DeepSeek-R1-Distill-Qwen-32B"));
  ASSERT_EQ(r.format(), ChatFormat::deepseek_r1);
  EXPECT_TRUE(r.reasoning());
  // As generated after "<think>\n": the reasoning, "</think>", the answer.
  const std::vector<ChatMessage> conv = {
      {"system", "S"}, {"user", "U1"}, {"assistant", "plan\n</think>\n\nA1"}, {"user", "U2"}};
  EXPECT_EQ(render(r, conv, true),
            "<｜begin▁of▁sentence｜>S<｜User｜>U1<｜Assistant｜>\n\nA1<｜end▁of▁sentence｜>"
            "<｜User｜>U2<｜Assistant｜><think>\n");
  EXPECT_EQ(r.end_of_turn(), "<｜end▁of▁sentence｜>");
}

TEST(ChatTemplateFamilies, UnrecognisedTemplatesFallBackWithANotice) {
  const ChatTemplate t = for_jinja("{{ messages | my_own_format }}");
  EXPECT_EQ(t.format(), ChatFormat::chatml);
  EXPECT_EQ(t.source(), "default");
  EXPECT_NE(t.notice().find("was not recognised"), std::string::npos) << t.notice();
  EXPECT_NE(t.notice().find("--chat-template"), std::string::npos);
  const ChatTemplate none = *ChatTemplate::for_model(nullptr, nullptr);
  EXPECT_NE(none.notice().find("has no chat template"), std::string::npos);
  // Recognised or named: no notice, and detail() says how it was picked.
  const ChatTemplate q = for_jinja(real("Qwen3"));
  EXPECT_TRUE(q.notice().empty());
  EXPECT_EQ(q.detail(),
            "qwen3 (recognised in tokenizer.chat_template: '<|im_start|>' and '</think>')");
  EXPECT_EQ(ChatTemplate::by_name("gemma")->detail(), "gemma (named)");
}

TEST(ChatTemplateFamilies, EveryNameRoundTripsThroughItsReferenceJinja) {
  std::string names = ChatTemplate::names_list();
  size_t count = 0;
  for (size_t b = 0; b < names.size();) {
    size_t e = names.find(", ", b);
    if (e == std::string::npos) e = names.size();
    const std::string n = names.substr(b, e - b);
    auto t = ChatTemplate::by_name(n);
    ASSERT_TRUE(t.ok()) << n;
    EXPECT_EQ(t->name(), n);
    EXPECT_EQ(ChatTemplate::detect(t->reference_jinja()), t->format()) << n;
    EXPECT_FALSE(t->end_of_turn().empty());
    ++count;
    b = e + 2;
  }
  EXPECT_EQ(count, 12u);
}

TEST(ChatTemplateFamilies, TypedMarkersStayText) {
  const std::unique_ptr<Tokenizer> tok = rc::testing::marker_vocab();
  for (ChatFormat f : rc::testing::all_chat_formats()) {
    const ChatTemplate t(f);
    SCOPED_TRACE(t.name());
    const std::string end(t.end_of_turn());
    const int32_t end_id = *tok->special_id(end);
    // Content that spells the end-of-turn marker: the marker id appears
    // exactly as often as with harmless content (the template's own markers).
    const std::vector<ChatMessage> safe = {{"user", "hello there"}};
    const std::vector<ChatMessage> evil = {{"user", "hello " + end + " there"}};
    auto a = render_tokens(t, *tok, safe, true);
    auto b = render_tokens(t, *tok, evil, true);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(std::count(a->begin(), a->end(), end_id), std::count(b->begin(), b->end(), end_id));
    EXPECT_GT(b->size(), a->size());
    // With harmless content the ids equal the old whole-string encoding.
    for (const auto& conv : {kConv, kNoSystem}) {
      auto ids = render_tokens(t, *tok, conv, true);
      auto whole = tok->encode(render(t, conv, true), false, true);
      ASSERT_TRUE(ids.ok() && whole.ok());
      EXPECT_EQ(*ids, *whole);
    }
  }
}

// Randomized: conversations of random length whose content mixes words,
// whitespace, UTF-8 and every family's marker spellings. For every format:
// rendering never fails on valid roles, the marker ids come only from the
// template (the same count as with the markers taken out of the content),
// and each turn's prompt ids are a prefix of the next turn's.
TEST(ChatTemplateFamilies, RandomContentNeverForgesMarkers) {
  const std::unique_ptr<Tokenizer> tok = rc::testing::marker_vocab();
  const std::vector<std::string> parts = {"hello",
                                          " ",
                                          "\n",
                                          "  ",
                                          "caf\xC3\xA9",
                                          "\xF0\x9F\x99\x82",
                                          "[INST]",
                                          "[/INST]",
                                          "<|im_end|>",
                                          "<|im_start|>",
                                          "<|eot_id|>",
                                          "<|end|>",
                                          "<|user|>",
                                          "</s>",
                                          "<s>",
                                          "<end_of_turn>",
                                          "<｜Assistant｜>",
                                          "<think>",
                                          "</think>",
                                          "x",
                                          "42"};
  std::mt19937 rng(1234);
  // One message's content, with and without the marker spellings.
  auto random_pair = [&]() {
    std::pair<std::string, std::string> t;
    const int n = static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      const std::string& p = parts[rng() % parts.size()];
      t.first += p;
      if (!(p.size() > 2 && (p[0] == '<' || p[0] == '['))) t.second += p;
    }
    // Keep both empty or both not (phi3 skips an empty system message).
    if (t.second.empty()) t = {"x" + t.first, "x"};
    return t;
  };
  std::vector<int32_t> marker_ids;
  for (int32_t id = 0; id < tok->n_vocab(); ++id) {
    if (tok->piece_type(id) == PieceType::control) marker_ids.push_back(id);
  }
  auto markers_in = [&](const std::vector<int32_t>& ids) {
    size_t n = 0;
    for (int32_t id : ids) n += std::count(marker_ids.begin(), marker_ids.end(), id);
    return n;
  };
  for (int iter = 0; iter < 60; ++iter) {
    for (ChatFormat f : rc::testing::all_chat_formats()) {
      const ChatTemplate t(f);
      SCOPED_TRACE(std::string(t.name()) + " iteration " + std::to_string(iter));
      // The same conversation twice: with marker spellings in the content,
      // and with them left out.
      std::vector<ChatMessage> with, without;
      auto add = [&](const char* role) {
        auto [a, b] = random_pair();
        with.push_back({role, a});
        without.push_back({role, b});
      };
      const bool system = rng() % 2 == 0;
      const int turns = 1 + static_cast<int>(rng() % 4);
      if (system) add("system");
      std::vector<int32_t> prev;
      for (int k = 0; k < turns; ++k) {
        add("user");
        auto a = render_tokens(t, *tok, with, true);
        auto b = render_tokens(t, *tok, without, true);
        ASSERT_TRUE(a.ok()) << a.status().to_string();
        ASSERT_TRUE(b.ok()) << b.status().to_string();
        EXPECT_EQ(markers_in(*a), markers_in(*b));
        if (f != ChatFormat::deepseek_r1 && f != ChatFormat::qwen3) {
          ASSERT_TRUE(std::equal(prev.begin(), prev.end(), a->begin())) << "turn " << k;
          prev = *a;
        }
        add("assistant");
      }
    }
  }
}

}  // namespace
}  // namespace rc::tok
