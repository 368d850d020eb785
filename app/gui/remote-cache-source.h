// The app's side of the panel's "Attach to a cache...": turns an
// AttachRequest into a live remote source over ZeroMQ (vLLM / SGLang /
// Dynamo KV events) or HTTP (a RadixChat server's /v1/cache/events), the
// transports ui/ may not see. main-window hands it to the CachePanel.
#pragma once

#include "panel/remote-attach.h"

namespace rc::gui {

rc::ui::panel::RemoteConnector make_remote_connector();

}  // namespace rc::gui
