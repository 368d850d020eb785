// libFuzzer target for KV-event batches (radixchat/kv-events.h): bytes into
// decode_batch(), and every batch that decodes into a BlockTree, whose
// statistics and text view are then computed. Built with RADIXCHAT_FUZZ=ON
// (see gguf-fuzz.cpp for the configure line):
//   cmake --build build-fuzz --target kv-events-fuzz
//   build-fuzz/tests/fuzz/kv-events-fuzz -max_total_time=120 -max_len=4096
// The tree lives across inputs so sequences of batches are exercised too;
// it is reset when it grows large, to keep each run fast.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "radixchat/kv-block-tree.h"
#include "radixchat/kv-events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static rc::kv_events::BlockTree* tree = new rc::kv_events::BlockTree();
  auto batch =
      rc::kv_events::decode_batch(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!batch.ok()) return 0;
  tree->apply(*batch);
  (void)tree->stats();
  (void)tree->to_text();
  if (tree->size() > 4096) *tree = rc::kv_events::BlockTree();
  return 0;
}
