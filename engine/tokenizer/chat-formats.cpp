#include "chat-formats.h"

namespace rc::tok::formats {

namespace {

Status bad_role(const std::string& role) {
  return Status(StatusCode::invalid_argument,
                "unknown chat role '" + role + "' (expected system, user or assistant)");
}

bool known_role(const std::string& r) { return r == "system" || r == "user" || r == "assistant"; }

Status check_roles(std::span<const ChatMessage> msgs) {
  for (const ChatMessage& m : msgs) {
    if (!known_role(m.role)) return bad_role(m.role);
  }
  return Status();
}

// Templates that take a system message only as the first one.
Status system_first_only(std::span<const ChatMessage> msgs, const char* name) {
  for (size_t i = 1; i < msgs.size(); ++i) {
    if (msgs[i].role == "system") {
      return Status(StatusCode::invalid_argument,
                    std::string("the ") + name +
                        " chat template accepts a system message only as the first message");
    }
  }
  return Status();
}

constexpr std::string_view kWs = " \t\n\r\f\v";

std::string strip_chars(std::string_view s, std::string_view chars, bool left, bool right) {
  size_t b = 0, e = s.size();
  if (left) {
    while (b < e && chars.find(s[b]) != std::string_view::npos) ++b;
  }
  if (right) {
    while (e > b && chars.find(s[e - 1]) != std::string_view::npos) --e;
  }
  return std::string(s.substr(b, e - b));
}

// Python's s.split(sep)[-1] and s.split(sep)[0].
std::string_view after_last(std::string_view s, std::string_view sep) {
  const size_t p = s.rfind(sep);
  return p == std::string_view::npos ? s : s.substr(p + sep.size());
}
std::string_view before_first(std::string_view s, std::string_view sep) {
  return s.substr(0, s.find(sep));
}

}  // namespace

void SegmentWriter::text(std::string_view s) {
  if (s.empty()) return;
  if (!out_.empty() && out_.back().kind == ChatSegment::Kind::text) {
    out_.back().text += s;
  } else {
    out_.push_back({ChatSegment::Kind::text, std::string(s)});
  }
}

std::string trim(std::string_view s) { return strip_chars(s, kWs, true, true); }

Status render_tagged(std::span<const ChatMessage> msgs, bool prompt, std::string_view end, bool bos,
                     bool skip_empty_system, SegmentWriter& w) {
  if (Status st = check_roles(msgs); !st.ok()) return st;
  if (bos) w.special("<s>");
  for (const ChatMessage& m : msgs) {
    if (skip_empty_system && m.role == "system" && m.content.empty()) continue;
    w.special("<|" + m.role + "|>");
    w.text("\n" + m.content);
    w.special(end);
    w.text("\n");
  }
  if (prompt) {
    w.special("<|assistant|>");
    w.text("\n");
  }
  return Status();
}

Status render_llama2(std::span<const ChatMessage> msgs, SegmentWriter& w) {
  if (Status st = check_roles(msgs); !st.ok()) return st;
  if (Status st = system_first_only(msgs, "llama2"); !st.ok()) return st;
  const bool have_system = !msgs.empty() && msgs[0].role == "system";
  const std::string sys = have_system ? "<<SYS>>\n" + msgs[0].content + "\n<</SYS>>\n\n" : "";
  for (size_t i = have_system ? 1 : 0; i < msgs.size(); ++i) {
    const ChatMessage& m = msgs[i];
    if (m.role == "user") {
      w.special("<s>");
      w.special("[INST]");
      w.text(" " + (i == 1 ? sys : std::string()) + m.content + " ");
      w.special("[/INST]");
    } else {
      w.text(" " + m.content + " ");
      w.special("</s>");
    }
  }
  // A system prompt alone still has to reach the model. (The user turn
  // already ends with the assistant's cue "[/INST]": no separate prompt.)
  if (have_system && msgs.size() == 1) {
    w.special("<s>");
    w.special("[INST]");
    w.text(" " + sys + " ");
    w.special("[/INST]");
  }
  return Status();
}

Status render_mistral(std::span<const ChatMessage> msgs, bool v3, SegmentWriter& w) {
  if (Status st = check_roles(msgs); !st.ok()) return st;
  if (Status st = system_first_only(msgs, v3 ? "mistral-v3" : "mistral"); !st.ok()) return st;
  const bool have_system = !msgs.empty() && msgs[0].role == "system";
  std::string prefix = have_system ? msgs[0].content + "\n\n" : "";
  w.special("<s>");
  for (size_t i = have_system ? 1 : 0; i < msgs.size(); ++i) {
    const ChatMessage& m = msgs[i];
    if (m.role == "user") {
      w.special("[INST]");
      w.text(" " + prefix + m.content + (v3 ? "" : " "));
      w.special("[/INST]");
      prefix.clear();
    } else {
      w.text(v3 ? " " + trim(m.content) : m.content);
      w.special("</s>");
    }
  }
  if (!prefix.empty()) {
    // System prompt only: the opening of the first user turn (a prefix of it).
    w.special("[INST]");
    w.text(" " + prefix);
  }
  return Status();
}

Status render_chatml(std::span<const ChatMessage> msgs, bool prompt,
                     const std::string& default_system, SegmentWriter& w) {
  if (Status st = check_roles(msgs); !st.ok()) return st;
  auto block = [&w](const std::string& role, const std::string& content) {
    w.special("<|im_start|>");
    w.text(role + "\n" + content);
    w.special("<|im_end|>");
    w.text("\n");
  };
  if (!default_system.empty() && (msgs.empty() || msgs[0].role != "system")) {
    block("system", default_system);
  }
  for (const ChatMessage& m : msgs) block(m.role, m.content);
  if (prompt) {
    w.special("<|im_start|>");
    w.text("assistant\n");
  }
  return Status();
}

Status render_qwen3(std::span<const ChatMessage> msgs, bool prompt, SegmentWriter& w) {
  if (Status st = check_roles(msgs); !st.ok()) return st;
  // The last user message; replies after it keep their reasoning.
  size_t last_query = msgs.empty() ? 0 : msgs.size() - 1;
  for (size_t i = msgs.size(); i-- > 0;) {
    if (msgs[i].role == "user") {
      last_query = i;
      break;
    }
  }
  for (size_t i = 0; i < msgs.size(); ++i) {
    const ChatMessage& m = msgs[i];
    w.special("<|im_start|>");
    if (m.role != "assistant") {
      w.text(m.role + "\n" + m.content);
    } else {
      std::string content = m.content, reasoning;
      if (content.find("</think>") != std::string::npos) {
        const std::string_view c = m.content;
        reasoning = strip_chars(
            after_last(strip_chars(before_first(c, "</think>"), "\n", false, true), "<think>"),
            "\n", true, false);
        content = strip_chars(after_last(c, "</think>"), "\n", true, false);
      }
      const bool last = i + 1 == msgs.size();
      if (i > last_query && (last || !reasoning.empty())) {
        w.text("assistant\n");
        w.special("<think>");
        w.text("\n" + strip_chars(reasoning, "\n", true, true) + "\n");
        w.special("</think>");
        w.text("\n\n" + strip_chars(content, "\n", true, false));
      } else {
        w.text("assistant\n" + content);
      }
    }
    w.special("<|im_end|>");
    w.text("\n");
  }
  if (prompt) {
    w.special("<|im_start|>");
    w.text("assistant\n");
  }
  return Status();
}

Status render_llama3(std::span<const ChatMessage> msgs, bool prompt, bool dated, SegmentWriter& w) {
  if (Status st = check_roles(msgs); !st.ok()) return st;
  auto header = [&w](const std::string& role) {
    w.special("<|start_header_id|>");
    w.text(role);
    w.special("<|end_header_id|>");
  };
  w.special("<|begin_of_text|>");
  size_t first = 0;
  if (dated) {
    const bool have_system = !msgs.empty() && msgs[0].role == "system";
    header("system");
    w.text("\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n" +
           (have_system ? trim(msgs[0].content) : std::string()));
    w.special("<|eot_id|>");
    first = have_system ? 1 : 0;
  }
  for (size_t i = first; i < msgs.size(); ++i) {
    header(msgs[i].role);
    w.text("\n\n" + trim(msgs[i].content));
    w.special("<|eot_id|>");
  }
  if (prompt) {
    header("assistant");
    w.text("\n\n");
  }
  return Status();
}

Status render_deepseek_r1(std::span<const ChatMessage> msgs, bool prompt, SegmentWriter& w) {
  if (Status st = check_roles(msgs); !st.ok()) return st;
  w.special("<｜begin▁of▁sentence｜>");
  std::string system;  // the jinja keeps the last system message, as plain text
  for (const ChatMessage& m : msgs) {
    if (m.role == "system") system = m.content;
  }
  w.text(system);
  for (const ChatMessage& m : msgs) {
    if (m.role == "user") {
      w.special("<｜User｜>");
      w.text(m.content);
    } else if (m.role == "assistant") {
      w.special("<｜Assistant｜>");
      w.text(after_last(m.content, "</think>"));
      w.special("<｜end▁of▁sentence｜>");
    }
  }
  if (prompt) {
    w.special("<｜Assistant｜>");
    w.special("<think>");
    w.text("\n");
  }
  return Status();
}

Status render_gemma(std::span<const ChatMessage> msgs, bool prompt, SegmentWriter& w) {
  if (Status st = check_roles(msgs); !st.ok()) return st;
  if (Status st = system_first_only(msgs, "gemma"); !st.ok()) return st;
  const bool have_system = !msgs.empty() && msgs[0].role == "system";
  std::string prefix = have_system ? msgs[0].content + "\n\n" : "";
  w.special("<bos>");
  for (size_t i = have_system ? 1 : 0; i < msgs.size(); ++i) {
    const ChatMessage& m = msgs[i];
    w.special("<start_of_turn>");
    w.text((m.role == "assistant" ? "model\n" : "user\n") + prefix + trim(m.content));
    w.special("<end_of_turn>");
    w.text("\n");
    prefix.clear();
  }
  if (!prefix.empty()) {
    // System prompt only: the opening of the first user turn (a prefix of it).
    w.special("<start_of_turn>");
    w.text("user\n" + prefix);
    return Status();
  }
  if (prompt) {
    w.special("<start_of_turn>");
    w.text("model\n");
  }
  return Status();
}

}  // namespace rc::tok::formats
