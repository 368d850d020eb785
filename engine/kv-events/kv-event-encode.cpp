// encode_batch (radixchat/kv-events.h): the vLLM array_like encoding, written
// with msgpack-cxx's packer so RadixChat can publish its own cache.
#include <msgpack.hpp>

#include <sstream>

#include "radixchat/kv-events.h"

namespace rc::kv_events {
namespace {

using Packer = msgpack::packer<std::stringstream>;

void pack_hash(Packer& pk, const BlockHash& h) {
  if (!h.empty() && h[0] == 'i' && h.size() == 9) {
    uint64_t v = 0;
    for (size_t i = 1; i < 9; ++i) v = (v << 8) | static_cast<unsigned char>(h[i]);
    pk.pack_uint64(v);
    return;
  }
  const size_t n = h.empty() ? 0 : h.size() - 1;
  pk.pack_bin(static_cast<uint32_t>(n));
  if (n) pk.pack_bin_body(h.data() + 1, static_cast<uint32_t>(n));
}

void pack_text_or_nil(Packer& pk, const std::string& s) {
  if (s.empty()) {
    pk.pack_nil();
    return;
  }
  pk.pack_str(static_cast<uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<uint32_t>(s.size()));
}

void pack_tag(Packer& pk, std::string_view tag) {
  pk.pack_str(static_cast<uint32_t>(tag.size()));
  pk.pack_str_body(tag.data(), static_cast<uint32_t>(tag.size()));
}

void pack_event(Packer& pk, const Event& ev) {
  if (ev.kind == EventKind::cleared) {
    pk.pack_array(1);
    pack_tag(pk, "AllBlocksCleared");
    return;
  }
  const bool stored = ev.kind == EventKind::stored;
  pk.pack_array(stored ? 7 : 3);
  pack_tag(pk, stored ? "BlockStored" : "BlockRemoved");
  pk.pack_array(static_cast<uint32_t>(ev.block_hashes.size()));
  for (const BlockHash& h : ev.block_hashes) pack_hash(pk, h);
  if (stored) {
    if (ev.parent)
      pack_hash(pk, *ev.parent);
    else
      pk.pack_nil();
    pk.pack_array(static_cast<uint32_t>(ev.token_ids.size()));
    for (int64_t t : ev.token_ids) pk.pack_int64(t);
    pk.pack_int64(ev.block_size);
    if (ev.lora_id)
      pk.pack_int64(*ev.lora_id);
    else
      pk.pack_nil();
  }
  pack_text_or_nil(pk, ev.medium);
}

}  // namespace

std::string encode_batch(const Batch& batch) {
  std::stringstream out;
  Packer pk(out);
  pk.pack_array(3);
  pk.pack_double(batch.ts);
  pk.pack_array(static_cast<uint32_t>(batch.events.size()));
  for (const Event& ev : batch.events) pack_event(pk, ev);
  pk.pack_int32(batch.rank);
  return out.str();
}

}  // namespace rc::kv_events
