// Internal to chat-template.cpp: one segment renderer per chat format (the
// renderings are listed in chat-template.h).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "chat-template.h"

namespace rc::tok::formats {

// Appends segments; adjacent text is merged so a text run stays one segment.
class SegmentWriter {
 public:
  void special(std::string_view s) { out_.push_back({ChatSegment::Kind::special, std::string(s)}); }
  void text(std::string_view s);
  std::vector<ChatSegment> take() { return std::move(out_); }

 private:
  std::vector<ChatSegment> out_;
};

// Every renderer: invalid_argument for an unknown role.
Status render_tagged(std::span<const ChatMessage> msgs, bool prompt, std::string_view end, bool bos,
                     bool skip_empty_system, SegmentWriter& w);
Status render_llama2(std::span<const ChatMessage> msgs, SegmentWriter& w);
Status render_mistral(std::span<const ChatMessage> msgs, bool v3, SegmentWriter& w);
Status render_chatml(std::span<const ChatMessage> msgs, bool prompt,
                     const std::string& default_system, SegmentWriter& w);
Status render_qwen3(std::span<const ChatMessage> msgs, bool prompt, SegmentWriter& w);
Status render_llama3(std::span<const ChatMessage> msgs, bool prompt, bool dated, SegmentWriter& w);
Status render_deepseek_r1(std::span<const ChatMessage> msgs, bool prompt, SegmentWriter& w);
Status render_gemma(std::span<const ChatMessage> msgs, bool prompt, SegmentWriter& w);

// jinja's `trim` (ASCII whitespace; what these templates' content needs).
std::string trim(std::string_view s);

}  // namespace rc::tok::formats
