// RemoteAttach (remote-attach.h).
#include "panel/remote-attach.h"

#include <imgui.h>

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

void RemoteAttach::draw() {
  if (!connector) return;
  flow(button_w(attached_ ? "Detach" : "Attach to a cache..."));
  if (attached_) {
    if (ImGui::Button("Detach")) detach();
    if (ImGui::IsItemHovered()) tooltip("Back to this app's own engine");
    return;
  }
  if (ImGui::Button("Attach to a cache...")) ImGui::OpenPopup("attach-cache");
  if (ImGui::IsItemHovered())
    tooltip(
        "Watch a vLLM / SGLang / Dynamo server's prefix cache (KV events) or a RadixChat "
        "server's");
  if (!ImGui::BeginPopup("attach-cache")) return;
  ImGui::RadioButton("KV events (vLLM, SGLang, Dynamo)", &kind_, 0);
  ImGui::RadioButton("RadixChat server", &kind_, 1);
  ImGui::PushItemWidth(ImGui::GetFontSize() * 22);
  if (kind_ == 0) {
    ImGui::InputText("endpoint", endpoint_, sizeof endpoint_);
    if (ImGui::IsItemHovered())
      tooltip("One publisher per data-parallel rank: separate them with commas");
    ImGui::InputText("replay (optional)", replay_, sizeof replay_);
    ImGui::InputText("topic (optional)", topic_, sizeof topic_);
    ImGui::InputText("CURVE server key (optional)", curve_key_, sizeof curve_key_);
    if (ImGui::IsItemHovered())
      tooltip("The publisher's public key, or its .pub file, for an encrypted stream");
  } else {
    ImGui::InputText("URL", url_, sizeof url_);
    ImGui::InputText("API key", key_, sizeof key_, ImGuiInputTextFlags_Password);
  }
  ImGui::InputText("vocabulary GGUF (optional)", vocab_, sizeof vocab_);
  ImGui::PopItemWidth();
  ImGui::TextDisabled("Without a CURVE key, ZeroMQ has no authentication: loopback only.");
  if (!error_.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", error_.c_str());
  if (ImGui::Button("Attach")) {
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
