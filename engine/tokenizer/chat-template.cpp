#include "chat-template.h"

#include <algorithm>
#include <string>

#include "chat-formats.h"

namespace rc::tok {

namespace {

struct Named {
  const char* name;
  ChatFormat format;
};
constexpr Named kNames[] = {
    {"radixchat", ChatFormat::radixchat},   {"llama2", ChatFormat::llama2},
    {"zephyr", ChatFormat::zephyr},         {"chatml", ChatFormat::chatml},
    {"llama3", ChatFormat::llama3},         {"llama3.1", ChatFormat::llama31},
    {"qwen3", ChatFormat::qwen3},           {"mistral", ChatFormat::mistral},
    {"mistral-v3", ChatFormat::mistral_v3}, {"deepseek-r1", ChatFormat::deepseek_r1},
    {"gemma", ChatFormat::gemma},           {"phi3", ChatFormat::phi3}};

bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

// A ChatML template's built-in system prompt (Qwen2: "You are a helpful
// assistant.", Qwen2.5: "You are Qwen, created by Alibaba Cloud. ..."): the
// literal text between "<|im_start|>system\n" and "<|im_end|>" inside one
// jinja string, when it has no expression in it.
std::string chatml_default_system(std::string_view j) {
  for (std::string_view open : {"<|im_start|>system\\n", "<|im_start|>system\n"}) {
    for (size_t p = j.find(open); p != std::string_view::npos; p = j.find(open, p + 1)) {
      const size_t b = p + open.size();
      const size_t e = j.find("<|im_end|>", b);
      if (e == std::string_view::npos) break;
      const std::string_view text = j.substr(b, e - b);
      if (text.empty() || text.find_first_of("'\"+{}") != std::string_view::npos) continue;
      return std::string(text);
    }
  }
  return {};
}

std::optional<ChatDetection> detect_marked(std::string_view j) {
  if (contains(j, "<｜Assistant｜>") || contains(j, "<｜User｜>")) {
    return ChatDetection{ChatFormat::deepseek_r1, "'<｜Assistant｜>'", {}};
  }
  if (contains(j, "<|im_start|>")) {
    if (contains(j, "</think>") || contains(j, "reasoning_content")) {
      return ChatDetection{ChatFormat::qwen3, "'<|im_start|>' and '</think>'", {}};
    }
    std::string sys = chatml_default_system(j);
    std::string ev = sys.empty() ? "'<|im_start|>'" : "'<|im_start|>' with a default system prompt";
    return ChatDetection{ChatFormat::chatml, std::move(ev), std::move(sys)};
  }
  if (contains(j, "<|start_header_id|>")) {
    if (contains(j, "Cutting Knowledge Date")) {
      return ChatDetection{
          ChatFormat::llama31, "'<|start_header_id|>' and 'Cutting Knowledge Date'", {}};
    }
    return ChatDetection{ChatFormat::llama3, "'<|start_header_id|>'", {}};
  }
  if (contains(j, "<start_of_turn>"))
    return ChatDetection{ChatFormat::gemma, "'<start_of_turn>'", {}};
  if (contains(j, "[INST]")) {
    if (contains(j, "<<SYS>>"))
      return ChatDetection{ChatFormat::llama2, "'[INST]' and '<<SYS>>'", {}};
    if (contains(j, "' [/INST]'") || contains(j, "\" [/INST]\"")) {
      return ChatDetection{ChatFormat::mistral, "'[INST]' and ' [/INST]'", {}};
    }
    return ChatDetection{ChatFormat::mistral_v3, "'[INST]' and '[/INST]' without a space", {}};
  }
  return std::nullopt;
}

std::optional<ChatDetection> detect_tagged(std::string_view j) {
  const bool built = contains(j, "'<|' + message['role'] + '|>") ||
                     contains(j, "\"<|\" + message[\"role\"] + \"|>");
  const bool spelled = contains(j, "<|user|>");
  if (!built && !spelled) return std::nullopt;
  if (contains(j, "<|end|>")) {
    if (built) return ChatDetection{ChatFormat::radixchat, "'<|' + role + '|>' and '<|end|>'", {}};
    return ChatDetection{ChatFormat::phi3, "'<|user|>' and '<|end|>'", {}};
  }
  if (contains(j, "</s>") || contains(j, "eos_token") || contains(j, "<|endoftext|>")) {
    return ChatDetection{ChatFormat::zephyr, "'<|user|>' and an end-of-sequence marker", {}};
  }
  return std::nullopt;
}

}  // namespace

const char* ChatTemplate::names_list() {
  return "radixchat, llama2, zephyr, chatml, llama3, llama3.1, qwen3, mistral, mistral-v3, "
         "deepseek-r1, gemma, phi3";
}

const char* ChatTemplate::name() const {
  for (const Named& n : kNames) {
    if (n.format == format_) return n.name;
  }
  return "?";
}

bool ChatTemplate::reasoning() const {
  return format_ == ChatFormat::qwen3 || format_ == ChatFormat::deepseek_r1;
}

std::string ChatTemplate::detail() const {
  std::string how;
  if (source_ == "named") {
    how = "named";
  } else if (source_ == "tokenizer.chat_template") {
    how = "recognised in tokenizer.chat_template: " + evidence_;
  } else if (source_ == "vocabulary") {
    how = "guessed from the vocabulary: " + evidence_;
  } else {
    how = source_;
  }
  std::string out = std::string(name()) + " (" + how + ")";
  if (!default_system_.empty()) out += "; default system prompt \"" + default_system_ + "\"";
  return out;
}

Result<ChatTemplate> ChatTemplate::by_name(std::string_view name) {
  for (const Named& n : kNames) {
    if (name == n.name) return ChatTemplate(n.format, "named");
  }
  return Status(StatusCode::invalid_argument,
                "unknown chat template '" + std::string(name) + "' (known: " + names_list() + ")");
}

std::optional<ChatDetection> ChatTemplate::detect_with_evidence(std::string_view j) {
  if (std::optional<ChatDetection> d = detect_marked(j)) return d;
  return detect_tagged(j);
}

std::optional<ChatFormat> ChatTemplate::detect(std::string_view jinja) {
  std::optional<ChatDetection> d = detect_with_evidence(jinja);
  if (!d) return std::nullopt;
  return d->format;
}

Result<ChatTemplate> ChatTemplate::for_model(const model::GgufFile* file, const Tokenizer* tok,
                                             std::string_view override_name) {
  if (!override_name.empty()) return by_name(override_name);
  bool had_template = false;
  if (file) {
    if (const model::GgufValue* v = file->find("tokenizer.chat_template")) {
      if (const auto* s = std::get_if<std::string_view>(v)) {
        had_template = true;
        if (std::optional<ChatDetection> d = detect_with_evidence(*s)) {
          ChatTemplate t(d->format, "tokenizer.chat_template");
          t.evidence_ = d->evidence;
          t.default_system_ = d->default_system;
          return t;
        }
      }
    }
  }
  const std::string why = had_template ? "the model's chat template was not recognised"
                                       : "the model has no chat template";
  auto fallback = [&why](ChatFormat f, const char* source, std::string evidence) {
    ChatTemplate t(f, source);
    t.evidence_ = std::move(evidence);
    t.notice_ = why + "; using " + t.name() +
                (t.evidence_.empty() ? " (the default)"
                                     : ", guessed from the vocabulary's " + t.evidence_) +
                " (choose another with --chat-template)";
    return t;
  };
  if (tok) {
    auto has = [tok](std::string_view s) { return tok->special_id(s).has_value(); };
    if (has("<|im_start|>")) return fallback(ChatFormat::chatml, "vocabulary", "'<|im_start|>'");
    if (has("<|start_header_id|>")) {
      return fallback(ChatFormat::llama3, "vocabulary", "'<|start_header_id|>'");
    }
    if (has("<start_of_turn>"))
      return fallback(ChatFormat::gemma, "vocabulary", "'<start_of_turn>'");
    if (has("<｜Assistant｜>")) {
      return fallback(ChatFormat::deepseek_r1, "vocabulary", "'<｜Assistant｜>'");
    }
    if (has("<|user|>") && has("<|end|>")) {
      return fallback(ChatFormat::radixchat, "vocabulary", "'<|user|>' and '<|end|>'");
    }
    if (has("<|user|>")) return fallback(ChatFormat::zephyr, "vocabulary", "'<|user|>'");
  }
  return fallback(ChatFormat::chatml, "default", {});
}

Result<std::vector<ChatSegment>> ChatTemplate::render_segments(std::span<const ChatMessage> msgs,
                                                               bool prompt) const {
  formats::SegmentWriter w;
  Status st;
  switch (format_) {
    case ChatFormat::radixchat:
      st = formats::render_tagged(msgs, prompt, "<|end|>", true, false, w);
      break;
    case ChatFormat::zephyr:
      st = formats::render_tagged(msgs, prompt, "</s>", true, false, w);
      break;
    case ChatFormat::phi3:
      st = formats::render_tagged(msgs, prompt, "<|end|>", false, true, w);
      break;
    case ChatFormat::llama2:
      st = formats::render_llama2(msgs, w);
      break;
    case ChatFormat::mistral:
    case ChatFormat::mistral_v3:
      st = formats::render_mistral(msgs, format_ == ChatFormat::mistral_v3, w);
      break;
    case ChatFormat::chatml:
      st = formats::render_chatml(msgs, prompt, default_system_, w);
      break;
    case ChatFormat::qwen3:
      st = formats::render_qwen3(msgs, prompt, w);
      break;
    case ChatFormat::llama3:
    case ChatFormat::llama31:
      st = formats::render_llama3(msgs, prompt, format_ == ChatFormat::llama31, w);
      break;
    case ChatFormat::deepseek_r1:
      st = formats::render_deepseek_r1(msgs, prompt, w);
      break;
    case ChatFormat::gemma:
      st = formats::render_gemma(msgs, prompt, w);
      break;
  }
  if (!st.ok()) return st;
  return w.take();
}

Result<std::string> ChatTemplate::render(std::span<const ChatMessage> messages,
                                         bool add_assistant_prompt) const {
  Result<std::vector<ChatSegment>> segs = render_segments(messages, add_assistant_prompt);
  if (!segs.ok()) return segs.status();
  std::string out;
  for (const ChatSegment& s : *segs) out += s.text;
  return out;
}

std::string_view ChatTemplate::end_of_turn() const {
  switch (format_) {
    case ChatFormat::radixchat:
    case ChatFormat::phi3:
      return "<|end|>";
    case ChatFormat::zephyr:
    case ChatFormat::llama2:
    case ChatFormat::mistral:
    case ChatFormat::mistral_v3:
      return "</s>";
    case ChatFormat::chatml:
    case ChatFormat::qwen3:
      return "<|im_end|>";
    case ChatFormat::llama3:
    case ChatFormat::llama31:
      return "<|eot_id|>";
    case ChatFormat::deepseek_r1:
      return "<｜end▁of▁sentence｜>";
    case ChatFormat::gemma:
      return "<end_of_turn>";
  }
  return {};
}

namespace {

// Ids of a vocabulary's byte pieces "<0xNN>" (sentencepiece byte fallback);
// -1 where missing. Scanned only when typed text spells a marker.
std::vector<int32_t> byte_pieces(const Tokenizer& tok) {
  std::vector<int32_t> ids(256, -1);
  for (int32_t id = 0; id < tok.n_vocab(); ++id) {
    const std::string_view p = tok.piece(id);
    if (p.size() == 6 && p.substr(0, 3) == "<0x" && p[5] == '>') {
      const int v = std::stoi(std::string(p.substr(3, 2)), nullptr, 16);
      if (v >= 0 && v < 256) ids[v] = id;
    }
  }
  return ids;
}

// Encodes a run of text. Markers that the vocabulary makes USER_DEFINED
// (the bundled model's <|user|>, <|end|>) are matched by the tokenizer even
// as text, so where the run spells one of this prompt's markers, that
// spelling is encoded byte by byte (or, without byte pieces, in two halves):
// text that spells a marker never becomes the marker.
Status encode_text(const Tokenizer& tok, std::string_view run,
                   const std::vector<std::string>& guarded, std::vector<int32_t>& out) {
  std::vector<int32_t> bytes;
  for (;;) {
    size_t at = std::string_view::npos, len = 0;
    for (const std::string& g : guarded) {
      const size_t p = run.find(g);
      if (p < at) at = p, len = g.size();
    }
    const std::string_view head = run.substr(0, at);
    if (!head.empty()) {
      Result<std::vector<int32_t>> ids = tok.encode(head, false, /*parse_special=*/false);
      if (!ids.ok()) return ids.status();
      out.insert(out.end(), ids->begin(), ids->end());
    }
    if (at == std::string_view::npos) return Status();
    const std::string_view marker = run.substr(at, len);
    if (bytes.empty()) bytes = byte_pieces(tok);
    const bool all = std::all_of(marker.begin(), marker.end(),
                                 [&](char c) { return bytes[static_cast<unsigned char>(c)] >= 0; });
    if (all) {
      for (char c : marker) out.push_back(bytes[static_cast<unsigned char>(c)]);
    } else {
      for (std::string_view half : {marker.substr(0, len / 2), marker.substr(len / 2)}) {
        Result<std::vector<int32_t>> ids = tok.encode(half, false, false);
        if (!ids.ok()) return ids.status();
        out.insert(out.end(), ids->begin(), ids->end());
      }
    }
    run = run.substr(at + len);
  }
}

}  // namespace

Result<std::vector<int32_t>> encode_segments(const Tokenizer& tok,
                                             std::span<const ChatSegment> segments) {
  std::vector<std::string> guarded;  // this prompt's user-defined markers
  for (const ChatSegment& s : segments) {
    if (s.kind != ChatSegment::Kind::special) continue;
    std::optional<int32_t> id = tok.special_id(s.text);
    if (id && tok.piece_type(*id) == PieceType::user_defined &&
        std::find(guarded.begin(), guarded.end(), s.text) == guarded.end()) {
      guarded.push_back(s.text);
    }
  }
  std::vector<int32_t> out;
  std::string run;  // text since the last marker: encoded as text, in one piece
  auto flush = [&]() -> Status {
    Status st = encode_text(tok, run, guarded, out);
    run.clear();
    return st;
  };
  for (const ChatSegment& s : segments) {
    if (s.kind == ChatSegment::Kind::ids) {
      if (Status st = flush(); !st.ok()) return st;
      out.insert(out.end(), s.ids.begin(), s.ids.end());
      continue;
    }
    std::optional<int32_t> id;
    if (s.kind == ChatSegment::Kind::special) id = tok.special_id(s.text);
    if (!id) {
      run += s.text;  // text, or a marker this vocabulary spells as text
      continue;
    }
    if (Status st = flush(); !st.ok()) return st;
    out.push_back(*id);
  }
  if (Status st = flush(); !st.ok()) return st;
  return out;
}

Result<std::vector<int32_t>> render_tokens(const ChatTemplate& tmpl, const Tokenizer& tok,
                                           std::span<const ChatMessage> messages,
                                           bool add_assistant_prompt) {
  Result<std::vector<ChatSegment>> segs = tmpl.render_segments(messages, add_assistant_prompt);
  if (!segs.ok()) return segs.status();
  return encode_segments(tok, *segs);
}

}  // namespace rc::tok
