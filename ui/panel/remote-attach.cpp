// RemoteAttach (remote-attach.h).
#include "panel/remote-attach.h"

#include <imgui.h>

#include <algorithm>

#include "panel/panel-fit.h"
#include "panel/panel-widgets.h"
#include "radixchat/vocabulary.h"

namespace rc::ui::panel {

std::string RemoteAttach::attach(const AttachRequest& r) {
  if (!connector || !install) return "attaching is not available in this build";
  std::shared_ptr<const Vocabulary> vocab;
  if (!r.vocab.empty()) {
    auto v = Vocabulary::load(r.vocab);
    if (!v.ok()) return "vocabulary: " + v.status().message();
    vocab = std::move(v.value());
  }
  auto src = connector(r);
  if (!src.ok()) return src.status().message();
  install(make_remote_feed(std::move(src.value()), std::move(vocab)));
  attached_ = true;
  return "";
}

void RemoteAttach::detach() {
  if (!attached_) return;
  attached_ = false;
  if (install) install(nullptr);
}

void RemoteAttach::draw(bool brief) {
  if (!connector) return;
  const char* label = brief ? "Attach...###attach" : "Attach to a cache...###attach";
  flow(button_w(attached_ ? "Detach" : label));
  if (attached_) {
    if (ImGui::Button("Detach")) detach();
    if (ImGui::IsItemHovered()) tooltip("Back to this app's own engine");
    return;
  }
  if (ImGui::Button(label)) ImGui::OpenPopup("attach-cache");
  button_min = ImGui::GetItemRectMin();
  button_max = ImGui::GetItemRectMax();
  if (ImGui::IsItemHovered())
    tooltip(
        "Attach to a cache: watch a vLLM / SGLang / Dynamo server's prefix cache (KV events) "
        "or a RadixChat server's");
  popup_shown = false;
  popup_texts.clear();
  if (!ImGui::BeginPopup("attach-cache")) return;
  popup_shown = true;
  popup_min = ImGui::GetWindowPos();
  popup_max =
      ImVec2(popup_min.x + ImGui::GetWindowSize().x, popup_min.y + ImGui::GetWindowSize().y);
  auto drawn = [&](const char* text) {
    popup_texts.push_back(
        {text, ImGui::GetItemRectMin(), ImGui::GetItemRectMax(), ImGui::CalcTextSize(text).x});
  };
  ImGui::RadioButton("KV events (vLLM, SGLang, Dynamo)", &kind_, 0);
  ImGui::RadioButton("RadixChat server", &kind_, 1);
  // Labels above their fields, and the popup no wider than the panel: a
  // label beside a field was cut to "endp / repl / topi / voca".
  const float pad = ImGui::GetStyle().WindowPadding.x;
  const float w =
      std::max(120.0f, std::min(ImGui::GetFontSize() * 22, ImGui::GetIO().DisplaySize.x - 4 * pad));
  auto field = [&](const char* label, char* buf, size_t n, ImGuiInputTextFlags flags = 0) {
    ImGui::TextUnformatted(label);
    drawn(label);
    ImGui::SetNextItemWidth(w);
    ImGui::PushID(label);
    ImGui::InputText("##field", buf, n, flags);
    ImGui::PopID();
  };
  if (kind_ == 0) {
    field("endpoint", endpoint_, sizeof endpoint_);
    if (ImGui::IsItemHovered())
      tooltip("One publisher per data-parallel rank: separate them with commas");
    field("replay (optional)", replay_, sizeof replay_);
    field("topic (optional)", topic_, sizeof topic_);
    field("CURVE server key (optional)", curve_key_, sizeof curve_key_);
    if (ImGui::IsItemHovered())
      tooltip("The publisher's public key, or its .pub file, for an encrypted stream");
  } else {
    field("URL", url_, sizeof url_);
    field("API key", key_, sizeof key_, ImGuiInputTextFlags_Password);
  }
  field("vocabulary GGUF (optional)", vocab_, sizeof vocab_);
  // The note of the mode chosen, and the error, wrap at the fields' width.
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + w);
  const char* note = kind_ == 0 ? "Without a CURVE key, ZeroMQ has no authentication: "
                                  "loopback or a private network only."
                                : "The server's API key protects its cache; over plain "
                                  "http it crosses the network readable.";
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", note);
  drawn(note);
  ImGui::PopStyleColor();
  if (!error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.45f, 0.4f, 1));
    ImGui::TextWrapped("%s", error_.c_str());
    drawn(error_.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::PopTextWrapPos();
  const bool submit = ImGui::Button("Attach");
  submit_min = ImGui::GetItemRectMin();
  submit_max = ImGui::GetItemRectMax();
  if (submit) {
    AttachRequest r;
    r.kind = kind_ == 0 ? AttachRequest::Kind::kv_events : AttachRequest::Kind::radixchat;
    r.endpoint = endpoint_;
    r.replay = replay_;
    r.topic = topic_;
    r.curve_server_key = curve_key_;
    r.url = url_;
    r.api_key = key_;
    r.vocab = vocab_;
    error_ = attach(r);
    if (error_.empty()) ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

}  // namespace rc::ui::panel
