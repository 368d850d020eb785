// "Attach to a cache...": the panel's control that swaps the local engine's
// feed for a remote cache (remote-feed.h) and "Detach" that brings the local
// one back. The app supplies the connector (it owns ZeroMQ and HTTP); without
// one the control is hidden. Pure ImGui + logic, GUI thread only.
#pragma once

#include <imgui.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "panel/remote-feed.h"
#include "radixchat/status.h"

namespace rc::ui::panel {

struct AttachRequest {
  // A vLLM/SGLang/Dynamo KV-events publisher (ZeroMQ) or a RadixChat server.
  enum class Kind { kv_events, radixchat } kind = Kind::kv_events;
  // kv_events: tcp://HOST:5557, or one publisher per data-parallel rank
  // separated by commas ("tcp://h:5557,tcp://h:5567"); replay endpoints in
  // the same order ("" for none).
  std::string endpoint;
  std::string replay;
  std::string topic;    // kv_events: prefix filter, "" for all
  std::string url;      // radixchat: http://HOST:PORT
  std::string api_key;  // radixchat
  std::string vocab;    // any GGUF for token text; "" shows ids
  // kv_events: the publisher's CURVE public key (40 Z85 characters) or a
  // file holding it (serve --kv-events-curve-secret); "" for plain ZeroMQ.
  std::string curve_server_key;
};

using RemoteConnector =
    std::function<Result<std::unique_ptr<RemoteBlockSource>>(const AttachRequest&)>;

class RemoteAttach {
 public:
  RemoteConnector connector;  // set by the app
  // Set by the panel's owner: install a feed (attached), or go back to the
  // local engine (null).
  std::function<void(std::unique_ptr<CacheFeed>)> install;

  bool attached() const { return attached_; }
  // Connects and installs the remote feed; "" or the reason it failed.
  std::string attach(const AttachRequest& r);
  void detach();

  // The header's button and its popup; `brief`: the button reads "Attach..."
  // (a narrow panel), its tooltip the rest.
  void draw(bool brief = false);

  // Where the latest frame drew the button and the popup, in display
  // pixels (tests assert the popup's labels and messages lie inside it,
  // whole). `popup_texts`: each field's label, the mode's note and the error.
  struct Drawn {
    std::string text;
    ImVec2 min{0, 0}, max{0, 0};
    float text_w = 0;  // the text's width on one line
  };
  ImVec2 button_min{0, 0}, button_max{0, 0};
  bool popup_shown = false;
  ImVec2 popup_min{0, 0}, popup_max{0, 0};
  ImVec2 submit_min{0, 0}, submit_max{0, 0};  // the popup's Attach button
  std::vector<Drawn> popup_texts;

 private:
  bool attached_ = false;
  std::string error_;
  AttachRequest form_;
  char endpoint_[512] = "tcp://127.0.0.1:5557";
  char replay_[512] = "";
  char topic_[128] = "";
  char curve_key_[512] = "";
  char url_[256] = "http://127.0.0.1:8080";
  char key_[256] = "";
  char vocab_[512] = "";
  int kind_ = 0;
};

}  // namespace rc::ui::panel
