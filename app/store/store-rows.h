// Internal: column lists and row readers shared by the store's .cpp files, so
// every query returns rows in one shape.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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
    "m.finish_reason, m.tokens";

Conversation read_conversation(const Stmt& st);
// corrupt_data when the row's token blob does not decode (see store.h).
Result<Message> read_message(const Stmt& st);

// Token ids as a blob: little-endian int32 each (the format is fixed, not
// the host's byte order, so a database moves between machines).
std::string encode_tokens(std::span<const std::int32_t> ids);
// nullopt: a size that is not a multiple of 4, or a negative id.
std::optional<std::vector<std::int32_t>> decode_tokens(const void* data, size_t bytes);

std::string sampling_to_json(const SamplingSettings& s);
SamplingSettings sampling_from_json(std::string_view text);  // tolerant, see store.h
std::optional<Role> parse_role(std::string_view name);

Status not_found(std::string_view what, Id id);

}  // namespace rc::store::detail
