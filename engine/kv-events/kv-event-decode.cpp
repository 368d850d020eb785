// Decoding of KV-event batches (radixchat/kv-events.h) with msgpack-cxx's
// object tree, so arrays and maps, signed and unsigned integers, str and bin
// are all seen as they are sent. Errors travel as a thrown Malformed inside
// this file only and leave decode_batch() as a Status.
#include <msgpack.hpp>

#include <exception>
#include <stdexcept>

#include "radixchat/kv-events.h"

namespace rc::kv_events {
namespace {

struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Obj = msgpack::object;

std::string_view as_text(const Obj& o) {
  if (o.type == msgpack::type::STR) return {o.via.str.ptr, o.via.str.size};
  if (o.type == msgpack::type::BIN) return {o.via.bin.ptr, o.via.bin.size};
  throw Malformed("expected a string");
}

int64_t as_int(const Obj& o, const char* what) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) {
    if (o.via.u64 > static_cast<uint64_t>(INT64_MAX))
      throw Malformed(std::string(what) + " out of range");
    return static_cast<int64_t>(o.via.u64);
  }
  if (o.type == msgpack::type::NEGATIVE_INTEGER) return o.via.i64;
  throw Malformed(std::string(what) + " is not an integer");
}

BlockHash as_hash(const Obj& o) {
  uint64_t v = 0;
  if (o.type == msgpack::type::POSITIVE_INTEGER) {
    v = o.via.u64;
  } else if (o.type == msgpack::type::NEGATIVE_INTEGER) {
    v = static_cast<uint64_t>(o.via.i64);
  } else if (o.type == msgpack::type::BIN || o.type == msgpack::type::STR) {
    std::string h = "b";
    h.append(as_text(o));
    return h;
  } else {
    throw Malformed("block hash is neither an integer nor bytes");
  }
  std::string h(9, 'i');
  for (int i = 0; i < 8; ++i) h[8 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return h;
}

const Obj* array_items(const Obj& o, const char* what, uint32_t* n) {
  if (o.type != msgpack::type::ARRAY) throw Malformed(std::string(what) + " is not an array");
  *n = o.via.array.size;
  return o.via.array.ptr;
}

std::vector<BlockHash> as_hashes(const Obj& o) {
  uint32_t n = 0;
  const Obj* items = array_items(o, "block_hashes", &n);
  std::vector<BlockHash> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) out.push_back(as_hash(items[i]));
  return out;
}

std::string as_optional_text(const Obj& o) {
  return o.type == msgpack::type::NIL ? std::string() : std::string(as_text(o));
}

// Fields of one event by name, whichever encoding carried them. Positions in
// the tagged-array form follow the msgspec struct field order.
struct Fields {
  const Obj* get(std::string_view name) const {
    for (const auto& [k, v] : named)
      if (k == name) return v;
    return nullptr;
  }
  std::vector<std::pair<std::string_view, const Obj*>> named;
};

constexpr std::string_view kStoredOrder[] = {"block_hashes", "parent_block_hash", "token_ids",
                                             "block_size",   "lora_id",           "medium"};
constexpr std::string_view kRemovedOrder[] = {"block_hashes", "medium"};

void set_field(Event& ev, std::string_view name, const Obj& v) {
  if (name == "block_hashes") {
    ev.block_hashes = as_hashes(v);
  } else if (name == "parent_block_hash") {
    if (v.type != msgpack::type::NIL) ev.parent = as_hash(v);
  } else if (name == "token_ids") {
    uint32_t n = 0;
    const Obj* items = array_items(v, "token_ids", &n);
    ev.token_ids.reserve(n);
    for (uint32_t i = 0; i < n; ++i) ev.token_ids.push_back(as_int(items[i], "token id"));
  } else if (name == "block_size") {
    ev.block_size = as_int(v, "block_size");
    if (ev.block_size < 0) throw Malformed("negative block_size");
  } else if (name == "lora_id") {
    if (v.type != msgpack::type::NIL) ev.lora_id = as_int(v, "lora_id");
  } else if (name == "medium") {
    ev.medium = as_optional_text(v);
  }  // anything else: a field this decoder does not use
}

// Returns false for an event tag it does not know (skipped, counted).
bool decode_event(const Obj& o, Event& ev) {
  std::string_view tag;
  Fields f;
  const Obj* positional = nullptr;
  uint32_t npos = 0;
  if (o.type == msgpack::type::ARRAY) {
    if (o.via.array.size == 0) throw Malformed("empty event array");
    tag = as_text(o.via.array.ptr[0]);
    positional = o.via.array.ptr + 1;
    npos = o.via.array.size - 1;
  } else if (o.type == msgpack::type::MAP) {
    for (uint32_t i = 0; i < o.via.map.size; ++i) {
      const auto& kv = o.via.map.ptr[i];
      if (kv.key.type != msgpack::type::STR) continue;
      std::string_view k = as_text(kv.key);
      if (k == "type")
        tag = as_text(kv.val);
      else
        f.named.emplace_back(k, &kv.val);
    }
    if (tag.empty()) throw Malformed("event map has no \"type\"");
  } else {
    throw Malformed("event is neither an array nor a map");
  }
  const std::string_view* order = nullptr;
  size_t order_size = 0;
  if (tag == "BlockStored") {
    ev.kind = EventKind::stored;
    order = kStoredOrder;
    order_size = std::size(kStoredOrder);
  } else if (tag == "BlockRemoved") {
    ev.kind = EventKind::removed;
    order = kRemovedOrder;
    order_size = std::size(kRemovedOrder);
  } else if (tag == "AllBlocksCleared") {
    ev.kind = EventKind::cleared;
    return true;
  } else {
    return false;
  }
  for (uint32_t i = 0; i < npos && i < order_size; ++i)
    f.named.emplace_back(order[i], &positional[i]);
  if (!f.get("block_hashes")) throw Malformed(std::string(tag) + " without block_hashes");
  for (const auto& [k, v] : f.named) set_field(ev, k, *v);
  return true;
}

void decode_events(const Obj& o, Batch& batch) {
  uint32_t n = 0;
  const Obj* items = array_items(o, "events", &n);
  for (uint32_t i = 0; i < n; ++i) {
    Event ev;
    if (decode_event(items[i], ev))
      batch.events.push_back(std::move(ev));
    else
      ++batch.unknown_events;
  }
}

double as_ts(const Obj& o) {
  if (o.type == msgpack::type::FLOAT64 || o.type == msgpack::type::FLOAT32) return o.via.f64;
  return static_cast<double>(as_int(o, "ts"));
}

void set_rank(const Obj& o, Batch& batch) {
  if (o.type == msgpack::type::NIL) return;
  const int64_t r = as_int(o, "data_parallel_rank");
  if (r < 0 || r > 1'000'000) throw Malformed("data_parallel_rank out of range");
  batch.rank = static_cast<int>(r);
  batch.rank_sent = true;
}

Batch decode_root(const Obj& root) {
  Batch batch;
  if (root.type == msgpack::type::ARRAY) {
    const uint32_t n = root.via.array.size;
    if (n < 2) throw Malformed("batch array has fewer than 2 fields");
    batch.ts = as_ts(root.via.array.ptr[0]);
    decode_events(root.via.array.ptr[1], batch);
    if (n >= 3) set_rank(root.via.array.ptr[2], batch);
    return batch;
  }
  if (root.type != msgpack::type::MAP) throw Malformed("batch is neither an array nor a map");
  bool has_events = false;
  for (uint32_t i = 0; i < root.via.map.size; ++i) {
    const auto& kv = root.via.map.ptr[i];
    if (kv.key.type != msgpack::type::STR) continue;
    const std::string_view k = as_text(kv.key);
    if (k == "ts") {
      batch.ts = as_ts(kv.val);
    } else if (k == "events") {
      decode_events(kv.val, batch);
      has_events = true;
    } else if (k == "data_parallel_rank" || k == "attn_dp_rank") {  // vLLM, SGLang
      set_rank(kv.val, batch);
    }
  }
  if (!has_events) throw Malformed("batch map has no \"events\"");
  return batch;
}

}  // namespace

std::string format_hash(const BlockHash& hash) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 1; i < hash.size(); ++i) {
    const auto b = static_cast<unsigned char>(hash[i]);
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

Result<Batch> decode_batch(std::string_view payload) {
  // Limits scaled to the payload: every element takes at least one byte, so
  // a forged length can never make the unpacker allocate more than that.
  const size_t n = payload.size();
  const auto cap = static_cast<std::size_t>(n);
  const msgpack::unpack_limit limit(cap, cap / 2 + 1, cap, cap, cap, 64);
  try {
    std::size_t off = 0;
    bool referenced = false;
    msgpack::object_handle h =
        msgpack::unpack(payload.data(), n, off, referenced, nullptr, nullptr, limit);
    if (off != n) throw Malformed("trailing bytes after the batch");
    return decode_root(h.get());
  } catch (const Malformed& e) {
    return Status(StatusCode::invalid_argument,
                  std::string("malformed KV-event batch: ") + e.what());
  } catch (const std::exception& e) {
    return Status(StatusCode::invalid_argument,
                  std::string("malformed KV-event batch (msgpack): ") + e.what());
  }
}

std::optional<uint64_t> decode_sequence(std::string_view frame) {
  if (frame.size() != 8) return std::nullopt;
  uint64_t v = 0;
  for (char c : frame) v = (v << 8) | static_cast<unsigned char>(c);
  return v;
}

std::optional<SequenceTracker::Gap> SequenceTracker::observe(uint64_t seq) {
  std::optional<Gap> gap;
  if (last_ && seq <= *last_) {
    ++restarts_;
  } else if (last_ && seq > *last_ + 1) {
    gap = Gap{*last_ + 1, seq};
    ++gaps_;
  }
  last_ = seq;
  return gap;
}

}  // namespace rc::kv_events
