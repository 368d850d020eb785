#include "chat-template.h"

namespace rc::tok {

namespace {

struct Named {
  const char* name;
  ChatFormat format;
};
constexpr Named kNames[] = {{"radixchat", ChatFormat::radixchat},
                            {"llama2", ChatFormat::llama2},
                            {"zephyr", ChatFormat::zephyr},
                            {"chatml", ChatFormat::chatml},
                            {"llama3", ChatFormat::llama3}};

bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

Status bad_role(const std::string& role) {
  return Status(StatusCode::invalid_argument,
                "unknown chat role '" + role + "' (expected system, user or assistant)");
}

bool known_role(const std::string& r) { return r == "system" || r == "user" || r == "assistant"; }

// "<|role|>\n content END\n" per message: radixchat (END <|end|>) and zephyr (END </s>).
Result<std::string> render_tagged(std::span<const ChatMessage> msgs, bool prompt,
                                  std::string_view end) {
  std::string out = "<s>";
  for (const ChatMessage& m : msgs) {
    if (!known_role(m.role)) return bad_role(m.role);
    out += "<|" + m.role + "|>\n" + m.content;
    out += end;
    out += '\n';
  }
  if (prompt) out += "<|assistant|>\n";
  return out;
}

Result<std::string> render_llama2(std::span<const ChatMessage> msgs, bool prompt) {
  std::string out, system;
  bool have_system = false;
  for (size_t i = 0; i < msgs.size(); ++i) {
    const ChatMessage& m = msgs[i];
    if (m.role == "system") {
      if (i != 0) {
        return Status(
            StatusCode::invalid_argument,
            "the llama2 chat template accepts a system message only as the first message");
      }
      system = m.content;
      have_system = true;
    } else if (m.role == "user") {
      out += "<s>[INST] ";
      if (have_system && i == 1) out += "<<SYS>>\n" + system + "\n<</SYS>>\n\n";
      out += m.content + " [/INST]";
    } else if (m.role == "assistant") {
      out += " " + m.content + " </s>";
    } else {
      return bad_role(m.role);
    }
  }
  if (have_system && msgs.size() == 1) {
    // A system prompt alone still has to reach the model.
    out += "<s>[INST] <<SYS>>\n" + system + "\n<</SYS>>\n\n [/INST]";
  }
  (void)prompt;  // the user turn already ends with the assistant's cue, "[/INST]"
  return out;
}

Result<std::string> render_chatml(std::span<const ChatMessage> msgs, bool prompt) {
  std::string out;
  for (const ChatMessage& m : msgs) {
    if (!known_role(m.role)) return bad_role(m.role);
    out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  }
  if (prompt) out += "<|im_start|>assistant\n";
  return out;
}

Result<std::string> render_llama3(std::span<const ChatMessage> msgs, bool prompt) {
  std::string out = "<|begin_of_text|>";
  for (const ChatMessage& m : msgs) {
    if (!known_role(m.role)) return bad_role(m.role);
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
  }
  if (prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

}  // namespace

const char* ChatTemplate::names_list() { return "radixchat, llama2, zephyr, chatml, llama3"; }

const char* ChatTemplate::name() const {
  for (const Named& n : kNames) {
    if (n.format == format_) return n.name;
  }
  return "?";
}

Result<ChatTemplate> ChatTemplate::by_name(std::string_view name) {
  for (const Named& n : kNames) {
    if (name == n.name) return ChatTemplate(n.format, "named");
  }
  return Status(StatusCode::invalid_argument,
                "unknown chat template '" + std::string(name) + "' (known: " + names_list() + ")");
}

std::optional<ChatFormat> ChatTemplate::detect(std::string_view j) {
  if (contains(j, "<|im_start|>")) return ChatFormat::chatml;
  if (contains(j, "<|start_header_id|>")) return ChatFormat::llama3;
  if (contains(j, "[INST]")) return ChatFormat::llama2;
  // "<|user|>" spelled out, or built from the role as Phi-3 and radixchat do.
  if (contains(j, "<|user|>") || contains(j, "'<|' + message['role'] + '|>") ||
      contains(j, "\"<|\" + message[\"role\"] + \"|>")) {
    if (contains(j, "<|end|>")) return ChatFormat::radixchat;
    if (contains(j, "</s>") || contains(j, "eos_token") || contains(j, "<|endoftext|>")) {
      return ChatFormat::zephyr;
    }
  }
  return std::nullopt;
}

Result<ChatTemplate> ChatTemplate::for_model(const model::GgufFile* file, const Tokenizer* tok,
                                             std::string_view override_name) {
  if (!override_name.empty()) return by_name(override_name);
  if (file) {
    if (const model::GgufValue* v = file->find("tokenizer.chat_template")) {
      if (const auto* s = std::get_if<std::string_view>(v)) {
        if (std::optional<ChatFormat> f = detect(*s)) {
          return ChatTemplate(*f, "tokenizer.chat_template");
        }
      }
    }
  }
  if (tok) {
    auto has = [tok](std::string_view s) { return tok->special_id(s).has_value(); };
    if (has("<|im_start|>")) return ChatTemplate(ChatFormat::chatml, "vocabulary");
    if (has("<|start_header_id|>")) return ChatTemplate(ChatFormat::llama3, "vocabulary");
    if (has("<|user|>") && has("<|end|>")) return ChatTemplate(ChatFormat::radixchat, "vocabulary");
    if (has("<|user|>")) return ChatTemplate(ChatFormat::zephyr, "vocabulary");
  }
  return ChatTemplate(ChatFormat::chatml, "default");
}

Result<std::string> ChatTemplate::render(std::span<const ChatMessage> messages,
                                         bool add_assistant_prompt) const {
  switch (format_) {
    case ChatFormat::radixchat:
      return render_tagged(messages, add_assistant_prompt, "<|end|>");
    case ChatFormat::zephyr:
      return render_tagged(messages, add_assistant_prompt, "</s>");
    case ChatFormat::llama2:
      return render_llama2(messages, add_assistant_prompt);
    case ChatFormat::chatml:
      return render_chatml(messages, add_assistant_prompt);
    case ChatFormat::llama3:
      return render_llama3(messages, add_assistant_prompt);
  }
  return Status(StatusCode::internal, "unknown chat format");
}

std::string_view ChatTemplate::end_of_turn() const {
  switch (format_) {
    case ChatFormat::radixchat:
      return "<|end|>";
    case ChatFormat::zephyr:
      return "</s>";
    case ChatFormat::llama2:
      return "</s>";
    case ChatFormat::chatml:
      return "<|im_end|>";
    case ChatFormat::llama3:
      return "<|eot_id|>";
  }
  return {};
}

std::string_view ChatTemplate::reference_jinja() const {
  switch (format_) {
    case ChatFormat::radixchat:
      return "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + "
             "message['content'] + '<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}"
             "{{ '<|assistant|>\\n' }}{% endif %}";
    case ChatFormat::zephyr:
      return "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + "
             "message['content'] + eos_token + '\\n' }}{% endfor %}{% if add_generation_prompt "
             "%}{{ '<|assistant|>\\n' }}{% endif %}";
    case ChatFormat::llama2:
      return "{% for message in messages %}{% if message['role'] == 'user' %}{{ bos_token + "
             "'[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == "
             "'assistant' %}{{ ' ' + message['content'] + ' ' + eos_token }}{% endif %}{% "
             "endfor %}";
    case ChatFormat::chatml:
      return "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
             "message['content'] + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt "
             "%}{{ '<|im_start|>assistant\\n' }}{% endif %}";
    case ChatFormat::llama3:
      return "{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + "
             "message['role'] + '<|end_header_id|>\\n\\n' + message['content'] + '<|eot_id|>' "
             "}}{% endfor %}{% if add_generation_prompt %}{{ "
             "'<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";
  }
  return {};
}

Result<std::vector<int32_t>> render_tokens(const ChatTemplate& tmpl, const Tokenizer& tok,
                                           std::span<const ChatMessage> messages,
                                           bool add_assistant_prompt) {
  Result<std::string> text = tmpl.render(messages, add_assistant_prompt);
  if (!text.ok()) return text.status();
  return tok.encode(*text, /*add_bos=*/false, /*parse_special=*/true);
}

}  // namespace rc::tok
