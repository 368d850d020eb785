// The panel attached to a remote cache: a vLLM / SGLang / Dynamo
// KV-events publisher, or a RadixChat server's /v1/cache/events. The app
// owns the transport (ZeroMQ, HTTP: app/kv-events) and hands the panel a
// RemoteBlockSource; ui never sees sockets (docs/architecture.md section 1: ui <- app).
//
// The feed turns the remote BlockTree into the panel's node model: each run
// of single-child blocks is one radix node (SGLang with page size 1 sends a
// block per token), a node's pages are its blocks, and with several
// data-parallel ranks each rank's tree hangs under a "rank N" node. Blocks
// whose parent the tree never held hang under an "unknown prefix" node
// (per rank), never under the root as if their prefix were empty. Node ids
// are stable (keyed by a run's first block), so selection and layout
// survive updates. The remote side sends no locks, hit counts or request
// timings: remote() tells the panel to say so instead of drawing zeros.
//
// Thread contract: GUI thread only, like every CacheFeed.
#pragma once

#include <memory>
#include <string>

#include "panel/cache-feed.h"
#include "radixchat/kv-block-tree.h"

namespace rc {
class Vocabulary;
}

namespace rc::ui::panel {

class RemoteBlockSource {
 public:
  virtual ~RemoteBlockSource() = default;
  // Applies what arrived since the last call; never blocks for long.
  virtual void poll() = 0;
  virtual const kv_events::BlockTree& tree() const = 0;
  // "vLLM/SGLang KV events at tcp://..." or "RadixChat server at http://...".
  virtual std::string describe() const = 0;
  // One line of counts and problems (lost messages, disconnected).
  virtual std::string status() const = 0;
};

// vocab: token text for labels (any GGUF's vocabulary), or null to show ids.
std::unique_ptr<CacheFeed> make_remote_feed(std::unique_ptr<RemoteBlockSource> source,
                                            std::shared_ptr<const Vocabulary> vocab);

// The synthetic tokens that stand for a "rank N" node's label, and for the
// "unknown prefix" node that blocks whose parent was never seen (stored
// before the panel attached) hang under.
inline constexpr Token kRankLabelToken0 = -1000000;
inline constexpr Token kUnknownPrefixToken = kRankLabelToken0 + 1;

}  // namespace rc::ui::panel
