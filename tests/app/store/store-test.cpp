// Store API: conversations, messages and branches, current leaf, search,
// presets, settings, export.
#include "store/store.h"

#include <nlohmann/json.hpp>

#include "store-test-util.h"
#include "store/store-rows.h"

namespace rc::store {
namespace {
using testing::TempDir;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::open(dir_ / "chat.db");
    ASSERT_OK(s);
    store_ = std::move(s).value();
  }

  Id new_chat(const std::string& title = "chat") {
    auto id = store_->create_conversation({.title = title});
    EXPECT_OK(id);
    return id.ok() ? id.value() : 0;
  }
  Id add(Id conv, std::optional<Id> parent, Role role, const std::string& text) {
    auto id = store_->append_message(
        {.conversation_id = conv, .parent_id = parent, .role = role, .content = text});
    EXPECT_OK(id);
    return id.ok() ? id.value() : 0;
  }
  std::vector<std::string> contents(const std::vector<Message>& ms) {
    std::vector<std::string> out;
    for (const auto& m : ms) out.push_back(m.content);
    return out;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST(SamplingJson, ContextOverflowPolicyReadsBackOrDefaults) {
  // Rows written before the policy existed, and bad values, read as the default.
  EXPECT_EQ(detail::sampling_from_json(R"({"temperature":0.5})").context_overflow,
            "rolling-window");
  EXPECT_EQ(detail::sampling_from_json(R"({"context_overflow":"sideways"})").context_overflow,
            "rolling-window");
  EXPECT_EQ(detail::sampling_from_json(R"({"context_overflow":7})").context_overflow,
            "rolling-window");
  SamplingSettings s;
  s.context_overflow = "stop";
  EXPECT_EQ(detail::sampling_from_json(detail::sampling_to_json(s)), s);
}

TEST_F(StoreTest, ConversationCrud) {
  SamplingSettings sampling;
  sampling.temperature = 0.2;
  sampling.top_k = 7;
  sampling.context_length = 4096;
  auto id = store_->create_conversation(
      {.title = "first", .system_prompt = "be brief", .sampling = sampling});
  ASSERT_OK(id);
  auto c = store_->get_conversation(id.value());
  ASSERT_OK(c);
  EXPECT_EQ(c->title, "first");
  EXPECT_EQ(c->system_prompt, "be brief");
  EXPECT_EQ(c->sampling, sampling);
  EXPECT_FALSE(c->preset_id);
  EXPECT_FALSE(c->current_leaf_id);
  EXPECT_GT(c->created_at_ms, 0);
  EXPECT_EQ(c->created_at_ms, c->updated_at_ms);

  ASSERT_OK(store_->rename_conversation(id.value(), "renamed"));
  sampling.max_tokens = 99;
  sampling.context_overflow = "truncate-middle";  // the per-conversation policy
  ASSERT_OK(store_->set_sampling(id.value(), sampling));
  ASSERT_OK(store_->set_system_prompt(id.value(), "be verbose", std::nullopt));
  c = store_->get_conversation(id.value());
  ASSERT_OK(c);
  EXPECT_EQ(c->title, "renamed");
  EXPECT_EQ(c->sampling.max_tokens, 99);
  EXPECT_EQ(c->sampling.context_overflow, "truncate-middle");
  EXPECT_EQ(c->system_prompt, "be verbose");

  const Id m = add(id.value(), std::nullopt, Role::user, "hello");
  ASSERT_OK(store_->delete_conversation(id.value()));
  EXPECT_EQ(store_->get_conversation(id.value()).status().code(), StatusCode::not_found);
  EXPECT_EQ(store_->get_message(m).status().code(), StatusCode::not_found);  // cascaded
  EXPECT_EQ(store_->delete_conversation(id.value()).code(), StatusCode::not_found);
  EXPECT_EQ(store_->rename_conversation(12345, "x").code(), StatusCode::not_found);
}

TEST_F(StoreTest, ListIsMostRecentlyUpdatedFirst) {
  const Id a = new_chat("a");
  const Id b = new_chat("b");
  const Id c = new_chat("c");
  auto list = store_->list_conversations();
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].id, c);
  add(a, std::nullopt, Role::user, "bump a");
  list = store_->list_conversations();
  ASSERT_OK(list);
  EXPECT_EQ((*list)[0].id, a);
  EXPECT_EQ((*list)[1].id, c);
  EXPECT_EQ((*list)[2].id, b);
  // Renaming does not reorder the list.
  ASSERT_OK(store_->rename_conversation(b, "bb"));
  list = store_->list_conversations(2);
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, a);
}

TEST_F(StoreTest, MessagesAndMetrics) {
  const Id conv = new_chat();
  const Id u = add(conv, std::nullopt, Role::user, "2+2?");
  auto reply = store_->append_message(
      {.conversation_id = conv, .parent_id = u, .role = Role::assistant, .model = "tiny"});
  ASSERT_OK(reply);
  auto m = store_->get_message(reply.value());
  ASSERT_OK(m);
  EXPECT_EQ(m->content, "");
  EXPECT_FALSE(m->metrics);
  EXPECT_EQ(m->parent_id, u);

  MessageMetrics metrics{.prompt_tokens = 30,
                         .cached_tokens = 24,
                         .completion_tokens = 2,
                         .ttft_ms = 12.5,
                         .tokens_per_s = 80.25,
                         .finish_reason = "stop"};
  ASSERT_OK(store_->update_message(reply.value(), "4", metrics));
  m = store_->get_message(reply.value());
  ASSERT_OK(m);
  EXPECT_EQ(m->content, "4");
  EXPECT_EQ(m->model, "tiny");
  ASSERT_TRUE(m->metrics);
  EXPECT_EQ(*m->metrics, metrics);
  EXPECT_EQ(m->role, Role::assistant);

  // User messages are immutable: editing branches instead.
  EXPECT_EQ(store_->update_message(u, "3+3?", std::nullopt).code(), StatusCode::invalid_argument);
  EXPECT_EQ(store_->update_message(999, "x", std::nullopt).code(), StatusCode::not_found);
  // Unicode and embedded NULs survive.
  const std::string odd = std::string("héllo ✓ \0 end", 15);
  const Id o = add(conv, reply.value(), Role::user, odd);
  EXPECT_EQ(store_->get_message(o)->content, odd);
}

TEST_F(StoreTest, AppendValidatesConversationAndParent) {
  const Id a = new_chat("a");
  const Id b = new_chat("b");
  const Id in_a = add(a, std::nullopt, Role::user, "x");
  auto bad = store_->append_message({.conversation_id = b, .parent_id = in_a});
  EXPECT_EQ(bad.status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(store_->append_message({.conversation_id = 777}).status().code(),
            StatusCode::not_found);
  EXPECT_EQ(store_->append_message({.conversation_id = a, .parent_id = 888}).status().code(),
            StatusCode::not_found);
  // The failed appends changed nothing.
  EXPECT_EQ(store_->current_leaf(b).value(), std::nullopt);
  EXPECT_EQ(store_->current_leaf(a).value(), in_a);
}

// The chat-app flow: edit an earlier user message -> a sibling branch; both
// kept; path and sibling navigation; switching lands on the newest leaf.
TEST_F(StoreTest, BranchesFromEditedUserMessage) {
  const Id conv = new_chat();
  const Id u1 = add(conv, std::nullopt, Role::user, "hi");
  const Id a1 = add(conv, u1, Role::assistant, "hello");
  const Id u2 = add(conv, a1, Role::user, "tell a joke");
  const Id a2 = add(conv, u2, Role::assistant, "joke A");
  EXPECT_EQ(store_->current_leaf(conv).value(), a2);

  // Edit u2 -> sibling u2b with its own reply.
  const Id u2b = add(conv, a1, Role::user, "tell a poem");
  const Id a2b = add(conv, u2b, Role::assistant, "poem");
  EXPECT_EQ(store_->current_leaf(conv).value(), a2b);
  auto thread = store_->current_thread(conv);
  ASSERT_OK(thread);
  EXPECT_EQ(contents(thread.value()),
            (std::vector<std::string>{"hi", "hello", "tell a poem", "poem"}));

  // Siblings of u2b = children of a1, by creation: the branch picker shows 2/2.
  auto sib = store_->children(conv, a1);
  ASSERT_OK(sib);
  ASSERT_EQ(sib->size(), 2u);
  EXPECT_EQ((*sib)[0].id, u2);
  EXPECT_EQ((*sib)[1].id, u2b);

  // Regenerate under u2: a second reply; its newest leaf is the new reply.
  const Id a2c = add(conv, u2, Role::assistant, "joke B");
  EXPECT_EQ(store_->newest_leaf(u2).value(), a2c);
  EXPECT_EQ(store_->newest_leaf(a2).value(), a2);  // a leaf is its own newest leaf
  EXPECT_EQ(store_->newest_leaf(u1).value(), a2c);

  // Switch back to the poem branch with the picker.
  auto leaf = store_->newest_leaf(u2b);
  ASSERT_OK(leaf);
  EXPECT_EQ(leaf.value(), a2b);
  ASSERT_OK(store_->set_current_leaf(conv, leaf.value()));
  thread = store_->current_thread(conv);
  ASSERT_OK(thread);
  EXPECT_EQ(contents(thread.value()).back(), "poem");

  auto path = store_->path_to(a2);
  ASSERT_OK(path);
  EXPECT_EQ(contents(path.value()),
            (std::vector<std::string>{"hi", "hello", "tell a joke", "joke A"}));
  EXPECT_FALSE(path->front().parent_id);

  // Editing the first message makes a second root.
  const Id r2 = add(conv, std::nullopt, Role::user, "hey");
  auto roots = store_->children(conv, std::nullopt);
  ASSERT_OK(roots);
  ASSERT_EQ(roots->size(), 2u);
  EXPECT_EQ((*roots)[0].id, u1);
  EXPECT_EQ((*roots)[1].id, r2);
  EXPECT_EQ(store_->path_to(r2)->size(), 1u);

  EXPECT_EQ(store_->path_to(4242).status().code(), StatusCode::not_found);
  EXPECT_EQ(store_->newest_leaf(4242).status().code(), StatusCode::not_found);
  EXPECT_EQ(store_->children(4242, std::nullopt).status().code(), StatusCode::not_found);
}

TEST_F(StoreTest, CurrentLeaf) {
  const Id a = new_chat("a");
  const Id b = new_chat("b");
  EXPECT_EQ(store_->current_thread(a)->size(), 0u);
  const Id m1 = add(a, std::nullopt, Role::user, "1");
  const Id m2 = add(a, m1, Role::assistant, "2");
  const Id other = add(b, std::nullopt, Role::user, "x");
  const auto before = store_->get_conversation(a)->updated_at_ms;
  ASSERT_OK(store_->set_current_leaf(a, m1));
  EXPECT_EQ(store_->current_leaf(a).value(), m1);
  EXPECT_EQ(store_->get_conversation(a)->current_leaf_id, m1);
  EXPECT_EQ(store_->get_conversation(a)->updated_at_ms, before);  // navigation is no update
  EXPECT_EQ(store_->set_current_leaf(a, other).code(), StatusCode::invalid_argument);
  EXPECT_EQ(store_->set_current_leaf(a, 9999).code(), StatusCode::not_found);
  EXPECT_EQ(store_->set_current_leaf(9999, m1).code(), StatusCode::not_found);
  EXPECT_EQ(store_->current_leaf(a).value(), m1);
  ASSERT_OK(store_->set_current_leaf(a, std::nullopt));
  EXPECT_EQ(store_->current_leaf(a).value(), std::nullopt);
  ASSERT_OK(store_->set_current_leaf(a, m2));
  EXPECT_EQ(store_->current_thread(a)->size(), 2u);
}

TEST_F(StoreTest, Search) {
  const Id a = new_chat("Radix trees");
  const Id b = new_chat("Cooking");
  const Id c = new_chat("misc");
  const Id u = add(b, std::nullopt, Role::user, "How long do I boil an EGG?");
  add(b, u, Role::user, "other branch mentions pasta_al_dente 100%");
  add(c, std::nullopt, Role::user, "nothing here");

  auto ids = [&](std::string_view q) {
    std::vector<Id> out;
    auto r = store_->search_conversations(q);
    EXPECT_OK(r);
    if (r.ok())
      for (const auto& conv : r.value()) out.push_back(conv.id);
    return out;
  };
  EXPECT_EQ(ids("radix"), (std::vector<Id>{a}));  // title, case-insensitive
  EXPECT_EQ(ids("egg"), (std::vector<Id>{b}));    // message content
  EXPECT_EQ(ids("PASTA_al"), (std::vector<Id>{b}));
  EXPECT_EQ(ids("100%"), (std::vector<Id>{b}));
  EXPECT_EQ(ids("0%x"), (std::vector<Id>{}));  // '%' is literal, not a wildcard
  EXPECT_EQ(ids("a_d"), (std::vector<Id>{}));  // so is '_'
  EXPECT_EQ(ids("zzz"), (std::vector<Id>{}));
  EXPECT_EQ(ids("").size(), 3u);
  // Most recently updated first.
  add(a, std::nullopt, Role::user, "the egg came first");
  EXPECT_EQ(ids("egg"), (std::vector<Id>{a, b}));
}

TEST_F(StoreTest, Presets) {
  auto p = store_->create_preset("Coder", "You write C++.");
  ASSERT_OK(p);
  auto q = store_->create_preset("Assistant", "You help.");
  ASSERT_OK(q);
  EXPECT_EQ(store_->create_preset("Coder", "dup").status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(store_->create_preset("", "x").status().code(), StatusCode::invalid_argument);

  auto list = store_->list_presets();
  ASSERT_OK(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "Assistant");  // by name
  EXPECT_EQ((*list)[1].text, "You write C++.");

  ASSERT_OK(store_->update_preset(p.value(), "Coder", "You write C++20."));
  EXPECT_EQ(store_->get_preset(p.value())->text, "You write C++20.");
  EXPECT_EQ(store_->update_preset(p.value(), "Assistant", "x").code(),
            StatusCode::invalid_argument);
  EXPECT_EQ(store_->update_preset(999, "n", "x").code(), StatusCode::not_found);

  auto conv = store_->create_conversation(
      {.title = "t", .system_prompt = "You write C++20.", .preset_id = p.value()});
  ASSERT_OK(conv);
  EXPECT_EQ(store_->get_conversation(conv.value())->preset_id, p.value());
  EXPECT_EQ(store_->create_conversation({.preset_id = 999}).status().code(), StatusCode::not_found);
  EXPECT_EQ(store_->set_system_prompt(conv.value(), "x", 999).code(), StatusCode::not_found);

  // Deleting the preset keeps the conversation's prompt text.
  ASSERT_OK(store_->delete_preset(p.value()));
  auto c = store_->get_conversation(conv.value());
  ASSERT_OK(c);
  EXPECT_FALSE(c->preset_id);
  EXPECT_EQ(c->system_prompt, "You write C++20.");
  EXPECT_EQ(store_->get_preset(p.value()).status().code(), StatusCode::not_found);
  EXPECT_EQ(store_->delete_preset(p.value()).code(), StatusCode::not_found);
}

TEST_F(StoreTest, Settings) {
  auto v = store_->get_setting("model");
  ASSERT_OK(v);
  EXPECT_FALSE(v.value());
  ASSERT_OK(store_->set_setting("model", "/models/a.gguf"));
  ASSERT_OK(store_->set_setting("model", "/models/b.gguf"));
  EXPECT_EQ(store_->get_setting("model").value(), "/models/b.gguf");
  ASSERT_OK(store_->set_setting("empty", ""));
  EXPECT_EQ(store_->get_setting("empty").value(), "");
  ASSERT_OK(store_->erase_setting("model"));
  EXPECT_FALSE(store_->get_setting("model").value());
  ASSERT_OK(store_->erase_setting("never-set"));
}

TEST_F(StoreTest, SettingsAndDataSurviveReopen) {
  const Id conv = new_chat("kept");
  add(conv, std::nullopt, Role::user, "persist me");
  ASSERT_OK(store_->set_setting("k", "v"));
  const auto path = store_->path();
  store_.reset();
  auto s = Store::open(path);
  ASSERT_OK(s);
  EXPECT_EQ(s.value()->get_setting("k").value(), "v");
  EXPECT_EQ(s.value()->current_thread(conv)->at(0).content, "persist me");
}

TEST_F(StoreTest, ExportMarkdownAndJson) {
  auto conv =
      store_->create_conversation({.title = "Export me", .system_prompt = "Be kind.\nAlways."});
  ASSERT_OK(conv);
  const Id id = conv.value();
  const Id u = add(id, std::nullopt, Role::user, "Hi *there*");
  add(id, u, Role::assistant, "old branch reply");
  auto a = store_->append_message({.conversation_id = id,
                                   .parent_id = u,
                                   .role = Role::assistant,
                                   .content = "Hello!\n\n```cpp\nint x;\n```",
                                   .model = "tiny-model",
                                   .metrics = MessageMetrics{.prompt_tokens = 20,
                                                             .cached_tokens = 16,
                                                             .completion_tokens = 9,
                                                             .ttft_ms = 41,
                                                             .tokens_per_s = 55.5,
                                                             .finish_reason = "stop"}});
  ASSERT_OK(a);

  auto md = store_->export_markdown(id);
  ASSERT_OK(md);
  const std::string expected =
      "# Export me\n\n"
      "**System prompt:**\n\n> Be kind.\n> Always.\n\n"
      "## User\n\nHi *there*\n\n"
      "## Assistant\n\nHello!\n\n```cpp\nint x;\n```\n\n"
      "*tiny-model · 20 prompt tokens (16 cached) · 9 tokens · TTFT 41 ms · 55.5 tok/s · "
      "stop*\n\n";
  EXPECT_EQ(md.value(), expected);
  EXPECT_EQ(md->find("old branch"), std::string::npos);  // current thread only

  auto js = store_->export_json(id);
  ASSERT_OK(js);
  const auto j = nlohmann::json::parse(js.value());
  EXPECT_EQ(j["format"], "radixchat-conversation");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["title"], "Export me");
  EXPECT_EQ(j["system_prompt"], "Be kind.\nAlways.");
  EXPECT_EQ(j["sampling"]["top_k"], 40);
  ASSERT_EQ(j["messages"].size(), 2u);
  EXPECT_EQ(j["messages"][0]["role"], "user");
  EXPECT_TRUE(j["messages"][0]["parent_id"].is_null());
  EXPECT_FALSE(j["messages"][0].contains("metrics"));
  EXPECT_EQ(j["messages"][1]["parent_id"], u);
  EXPECT_EQ(j["messages"][1]["model"], "tiny-model");
  EXPECT_EQ(j["messages"][1]["metrics"]["cached_tokens"], 16);
  EXPECT_EQ(j["messages"][1]["metrics"]["finish_reason"], "stop");
  const std::string created = j["created_at"];
  EXPECT_EQ(created.size(), 20u);  // 2024-05-01T12:00:00Z
  EXPECT_EQ(created.back(), 'Z');

  // Invalid UTF-8 from a model does not break JSON export.
  add(id, a.value(), Role::user, std::string("bad \xff\xfe bytes"));
  EXPECT_OK(store_->export_json(id));
  EXPECT_EQ(store_->export_json(999).status().code(), StatusCode::not_found);
}

TEST(DefaultDatabasePath, FollowsXdg) {
  TempDir dir;
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  const std::string saved = old_xdg ? old_xdg : "";
  setenv("XDG_DATA_HOME", (dir.path() / "data").c_str(), 1);
  auto p = default_database_path();
  ASSERT_OK(p);
  EXPECT_EQ(p.value(), dir.path() / "data" / "radixchat" / "radixchat.db");
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "data" / "radixchat"));

  // Relative XDG_DATA_HOME is ignored (XDG spec): falls back to HOME.
  const char* old_home = std::getenv("HOME");
  const std::string saved_home = old_home ? old_home : "";
  setenv("XDG_DATA_HOME", "relative/dir", 1);
  setenv("HOME", dir.path().c_str(), 1);
  p = default_database_path();
  ASSERT_OK(p);
  EXPECT_EQ(p.value(), dir.path() / ".local" / "share" / "radixchat" / "radixchat.db");
  unsetenv("XDG_DATA_HOME");
  p = default_database_path();
  ASSERT_OK(p);
  EXPECT_EQ(p.value(), dir.path() / ".local" / "share" / "radixchat" / "radixchat.db");

  if (old_xdg) setenv("XDG_DATA_HOME", saved.c_str(), 1);
  if (old_home)
    setenv("HOME", saved_home.c_str(), 1);
  else
    unsetenv("HOME");
}

}  // namespace
}  // namespace rc::store
