// Token-exact history (tokenizer/chat-exact.h): a reply given as the ids it
// was generated as goes into the next prompt as those ids. The oracle is the
// plain rendering: the same text (decoded), and the prompt that generated
// the reply followed by its ids is a prefix of the next prompt (what the
// cache holds), for every template that writes a reply verbatim right after
// its assistant opening (mistral-v3 and llama2 put a space between them in
// the history that the prompt did not have: no hit there either way).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "chat-template-fixtures.h"
#include "tokenizer-fixtures.h"
#include "tokenizer/chat-exact.h"

namespace rc::tok {
namespace {

// `text` as byte pieces (<0xNN>): a split no encoder picks for ASCII words,
// as a sampled reply often is not the canonical one.
std::vector<int32_t> byte_ids(const Tokenizer& tok, const std::string& text) {
  std::vector<int32_t> ids;
  for (unsigned char c : text) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", c);
    for (int32_t id = 0; id < tok.n_vocab(); ++id) {
      if (tok.piece(id) == name) {
        ids.push_back(id);
        break;
      }
    }
  }
  EXPECT_EQ(ids.size(), text.size()) << "the vocabulary lacks byte pieces";
  return ids;
}

std::vector<int32_t> plain(ChatFormat f, const Tokenizer& tok, const std::vector<ChatMessage>& m,
                           bool prompt) {
  Result<std::vector<int32_t>> r = render_tokens(ChatTemplate(f), tok, m, prompt);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<int32_t>{};
}

ExactRender exact(ChatFormat f, const Tokenizer& tok, const std::vector<ChatMessage>& m,
                  const std::vector<std::vector<int32_t>>& ids, bool prompt) {
  std::vector<std::span<const int32_t>> spans(ids.begin(), ids.end());
  Result<ExactRender> r = render_tokens_exact(ChatTemplate(f), tok, m, spans, prompt);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : ExactRender{};
}

bool starts_with(const std::vector<int32_t>& v, const std::vector<int32_t>& prefix) {
  return v.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), v.begin());
}

const std::string kReply = "Sure: the tree keeps it.";

TEST(ChatExact, ReplyIdsFollowTheirPromptInTheNextPrompt) {
  const Tokenizer& tok = rc::testing::bundled_sidecar();
  for (ChatFormat f : {ChatFormat::radixchat, ChatFormat::zephyr, ChatFormat::phi3,
                       ChatFormat::chatml, ChatFormat::qwen3, ChatFormat::llama3,
                       ChatFormat::llama31, ChatFormat::mistral, ChatFormat::gemma}) {
    SCOPED_TRACE(ChatTemplate(f).name());
    const std::vector<ChatMessage> turn1 = {{"system", "Be brief."}, {"user", "Where is it?"}};
    const std::vector<int32_t> generated = byte_ids(tok, kReply);
    ASSERT_EQ(reply_text(tok, generated), kReply);
    std::vector<ChatMessage> turn2 = turn1;
    turn2.push_back({"assistant", kReply});
    turn2.push_back({"user", "And then?"});
    const ExactRender e = exact(f, tok, turn2, {{}, {}, generated, {}}, true);
    EXPECT_EQ(e.spliced, 1);
    // What the cache holds after turn 1 starts turn 2's prompt.
    std::vector<int32_t> cached = plain(f, tok, turn1, true);
    cached.insert(cached.end(), generated.begin(), generated.end());
    EXPECT_TRUE(starts_with(e.tokens, cached));
    // Same text as the plain rendering; re-encoding gives other ids.
    const std::vector<int32_t> p = plain(f, tok, turn2, true);
    EXPECT_EQ(tok.decode(e.tokens, true), tok.decode(p, true));
    EXPECT_FALSE(starts_with(p, cached));
  }
}

TEST(ChatExact, SeveralRepliesAndTheRestUnchanged) {
  const Tokenizer& tok = rc::testing::bundled_sidecar();
  const ChatFormat f = ChatFormat::radixchat;
  const std::vector<ChatMessage> m = {{"user", "a"},
                                      {"assistant", "one two"},
                                      {"user", "b"},
                                      {"assistant", "three"},
                                      {"user", "c"}};
  const ExactRender e =
      exact(f, tok, m, {{}, byte_ids(tok, "one two"), {}, byte_ids(tok, "three"), {}}, true);
  EXPECT_EQ(e.spliced, 2);
  EXPECT_EQ(tok.decode(e.tokens, true), tok.decode(plain(f, tok, m, true), true));
  // No ids, or none given: exactly the plain rendering.
  EXPECT_EQ(exact(f, tok, m, {}, true).tokens, plain(f, tok, m, true));
  EXPECT_EQ(exact(f, tok, m, {{}, {}, {}, {}, {}}, true).spliced, 0);
}

TEST(ChatExact, IdsThatDoNotStreamToTheContentAreNotUsed) {
  const Tokenizer& tok = rc::testing::bundled_sidecar();
  const ChatFormat f = ChatFormat::radixchat;
  const std::vector<ChatMessage> m = {{"user", "a"}, {"assistant", kReply}, {"user", "b"}};
  const std::vector<int32_t> want = plain(f, tok, m, true);
  std::vector<int32_t> other = byte_ids(tok, kReply + "!");
  EXPECT_EQ(exact(f, tok, m, {{}, other, {}}, true).tokens, want);
  // An end-of-generation id at the end closes the turn: never spliced into
  // history (the template writes its own end of turn).
  std::vector<int32_t> with_end = byte_ids(tok, kReply);
  with_end.push_back(*tok.special_id("<|end|>"));
  EXPECT_FALSE(reply_text(tok, with_end).has_value());
  EXPECT_EQ(exact(f, tok, m, {{}, with_end, {}}, true).tokens, want);
  // Mid-reply (a request with ignore_eos went past it) it stays in the ids,
  // as the cache holds them; the text is what the reply streamed.
  const int32_t end_id = *tok.special_id("<|end|>");
  std::vector<int32_t> mid = byte_ids(tok, kReply.substr(0, 2));
  mid.push_back(end_id);
  const std::vector<int32_t> rest = byte_ids(tok, kReply.substr(2));
  mid.insert(mid.end(), rest.begin(), rest.end());
  const std::optional<std::string> streamed = reply_text(tok, mid);
  ASSERT_TRUE(streamed.has_value());
  const std::vector<ChatMessage> with_mid = {
      {"user", "a"}, {"assistant", *streamed}, {"user", "b"}};
  const std::vector<int32_t> as_text = plain(f, tok, with_mid, true);
  const std::vector<int32_t> spliced = exact(f, tok, with_mid, {{}, mid, {}}, true).tokens;
  EXPECT_EQ(std::count(spliced.begin(), spliced.end(), end_id),
            std::count(as_text.begin(), as_text.end(), end_id) + 1);
  // Out of the vocabulary, or half a UTF-8 character at the end.
  EXPECT_FALSE(reply_text(tok, std::vector<int32_t>{-1}).has_value());
  EXPECT_FALSE(reply_text(tok, std::vector<int32_t>{tok.n_vocab()}).has_value());
  const std::vector<int32_t> half = byte_ids(tok, "\xC3");
  EXPECT_FALSE(reply_text(tok, half).has_value());
  // ids on a user message are ignored.
  EXPECT_EQ(exact(f, tok, m, {byte_ids(tok, "a"), {}, {}}, true).spliced, 0);
}

TEST(ChatExact, ControlIdsSampledMidReplyStayInTheHistory) {
  const Tokenizer& tok = rc::testing::bundled_sidecar();
  const ChatFormat f = ChatFormat::radixchat;
  const std::vector<ChatMessage> m = {{"user", "a"}, {"assistant", kReply}, {"user", "b"}};
  // A control id sampled mid-reply (here BOS) streams no text: the ids still
  // stand for the content and go in as generated, as the cache holds them.
  std::vector<int32_t> with_bos = byte_ids(tok, kReply);
  with_bos.insert(with_bos.begin() + 4, tok.bos());
  ASSERT_EQ(tok.piece_type(tok.bos()), PieceType::control);
  EXPECT_EQ(reply_text(tok, with_bos), kReply);
  const ExactRender spliced = exact(f, tok, m, {{}, with_bos, {}}, true);
  EXPECT_EQ(spliced.spliced, 1);
  EXPECT_NE(
      std::search(spliced.tokens.begin(), spliced.tokens.end(), with_bos.begin(), with_bos.end()),
      spliced.tokens.end());
}

TEST(ChatExact, TemplatesThatRewriteTheReplyKeepItAsText) {
  const Tokenizer& tok = rc::testing::bundled_sidecar();
  // qwen3 drops an earlier reply's <think> block; llama3 trims; llama2
  // writes a space after the reply in the same run.
  const std::string think = "<think>\nhm\n</think>\n\nYes.";
  const std::string spaced = " Yes. ";
  for (auto [f, content] :
       std::vector<std::pair<ChatFormat, std::string>>{{ChatFormat::qwen3, think},
                                                       {ChatFormat::deepseek_r1, think},
                                                       {ChatFormat::llama3, spaced},
                                                       {ChatFormat::gemma, spaced},
                                                       {ChatFormat::llama2, "Yes."}}) {
    SCOPED_TRACE(ChatTemplate(f).name());
    const std::vector<ChatMessage> m = {{"user", "a"}, {"assistant", content}, {"user", "b"}};
    const ExactRender e = exact(f, tok, m, {{}, byte_ids(tok, content), {}}, true);
    EXPECT_EQ(e.spliced, 0);
    EXPECT_EQ(e.tokens, plain(f, tok, m, true));
  }
}

TEST(ChatExact, ContentSpellingThePlaceholderIsText) {
  const Tokenizer& tok = rc::testing::bundled_sidecar();
  const ChatFormat f = ChatFormat::radixchat;
  const std::string odd = "x\x1Arc-reply-1\x1Ay";
  const std::vector<ChatMessage> m = {{"user", odd}, {"assistant", kReply}, {"user", "b"}};
  const ExactRender e = exact(f, tok, m, {{}, byte_ids(tok, kReply), {}}, true);
  EXPECT_EQ(e.spliced, 0);
  EXPECT_EQ(e.tokens, plain(f, tok, m, true));
}

TEST(ChatExact, RandomRepliesNeverChangeTheText) {
  // Random splits of random replies (markers and odd bytes included) for
  // every format: when spliced, the decoded prompt equals the plain one.
  const Tokenizer& tok = rc::testing::bundled_sidecar();
  std::mt19937 rng(7);
  const std::vector<std::string> words = {"a", " b", "<|end|>", "\n", "é", "</think>", " ", "z9"};
  for (ChatFormat f : rc::testing::all_chat_formats()) {
    SCOPED_TRACE(ChatTemplate(f).name());
    for (int round = 0; round < 20; ++round) {
      std::string reply;
      for (int k = 1 + round % 5; k > 0; --k) reply += words[rng() % words.size()];
      // Half the rounds: canonical ids of one piece of text; half: bytes.
      std::vector<int32_t> ids =
          round % 2 ? byte_ids(tok, reply) : *tok.encode(reply, false, /*parse_special=*/false);
      const std::vector<ChatMessage> m = {
          {"system", "s"}, {"user", "u"}, {"assistant", reply}, {"user", "v"}};
      const ExactRender e = exact(f, tok, m, {{}, {}, ids, {}}, true);
      if (e.spliced == 0) {
        EXPECT_EQ(e.tokens, plain(f, tok, m, true));
      } else if (round % 2) {
        EXPECT_EQ(tok.decode(e.tokens, true), tok.decode(plain(f, tok, m, true), true))
            << "reply '" << reply << "'";
      }
    }
  }
}

}  // namespace
}  // namespace rc::tok
