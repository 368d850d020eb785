// Internal: column lists and row readers shared by the store's .cpp files, so
// every query returns rows in one shape.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "store/sqlite-util.h"
#include "store/store.h"

namespace rc::store::detail {

// SELECT list for Conversation rows (table alias c).
inline constexpr const char* kConversationCols =
    "c.id, c.title, c.created_at, c.updated_at, c.system_prompt, c.preset_id, "
    "c.current_leaf_id, c.sampling";
// SELECT list for Message rows (table alias m).
inline constexpr const char* kMessageCols =
    "m.id, m.conversation_id, m.parent_id, m.role, m.content, m.created_at, m.model, "
    "m.prompt_tokens, m.cached_tokens, m.completion_tokens, m.ttft_ms, m.tokens_per_s, "
    "m.finish_reason";

Conversation read_conversation(const Stmt& st);
Message read_message(const Stmt& st);

std::string sampling_to_json(const SamplingSettings& s);
SamplingSettings sampling_from_json(std::string_view text);  // tolerant, see store.h
std::optional<Role> parse_role(std::string_view name);

Status not_found(std::string_view what, Id id);

}  // namespace rc::store::detail
