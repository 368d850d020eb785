// Chat templates as real model files carry them (tokenizer.chat_template),
// for the recognition and rendering tests. Sources are named next to each
// text in chat-template-fixtures.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/chat-template.h"

namespace rc::testing {

struct RealTemplate {
  const char* model;   // where the text comes from
  const char* format;  // the ChatTemplate name it must be recognised as
  std::string jinja;
};

const std::vector<RealTemplate>& real_chat_templates();

// Every ChatFormat.
const std::vector<tok::ChatFormat>& all_chat_formats();
// An SPM vocabulary (synthetic pieces, dummy prefix on) in which every
// family's markers are control tokens.
std::unique_ptr<tok::Tokenizer> marker_vocab();

}  // namespace rc::testing
