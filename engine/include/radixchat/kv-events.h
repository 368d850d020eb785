// KV events: the ZeroMQ + msgpack wire format in which vLLM, SGLang, Dynamo
// and others publish the blocks their prefix caches store and evict. This
// header decodes one message's batch into plain structs and tracks message
// sequence numbers; it knows nothing of sockets (app/kv-events does those).
//
// Wire facts (from vLLM's vllm/distributed/kv_events.py and SGLang's
// disaggregation/kv_events.py): a message is three frames, topic, an 8-byte
// big-endian sequence number, and a msgpack batch [ts, events] or
// [ts, events, data_parallel_rank]. An event is either a tagged array
// ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size,
// lora_id, medium, ...] (msgspec array_like, older servers) or a map with a
// "type" key (newer ones); trailing fields may be omitted and unknown ones are
// ignored. A block hash is a signed or unsigned 64-bit integer or bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/status.h"

namespace rc::kv_events {

// A block hash in canonical form: 'i' + 8 big-endian bytes for an integer
// (signed and unsigned spellings of one 64-bit pattern compare equal), or
// 'b' + the raw bytes for a bytes hash.
using BlockHash = std::string;

// Printable form: 16 hex digits for an integer hash, hex of the bytes for a
// bytes hash.
std::string format_hash(const BlockHash& hash);

enum class EventKind { stored, removed, cleared };

struct Event {
  EventKind kind = EventKind::cleared;
  std::vector<BlockHash> block_hashes;  // stored, removed
  std::optional<BlockHash> parent;      // stored: none for a root block
  std::vector<int64_t> token_ids;       // stored: all blocks' tokens in order
  int64_t block_size = 0;               // stored: tokens per block (0: unknown)
  std::optional<int64_t> lora_id;       // stored
  std::string medium;                   // stored, removed ("" when absent)
};

struct Batch {
  double ts = 0;
  int rank = 0;  // data_parallel_rank (SGLang: attn_dp_rank); 0 when omitted
  // The batch named its rank (older servers omit it: a subscriber with one
  // endpoint per rank then knows the rank from the endpoint instead).
  bool rank_sent = false;
  std::vector<Event> events;
  int unknown_events = 0;  // events with a tag this decoder does not know
};

// Decodes one msgpack batch. Any structural error (truncated bytes, wrong
// types, a missing required field, trailing bytes) gives invalid_argument
// with a one-line reason; it never throws and never aborts.
Result<Batch> decode_batch(std::string_view payload);

// Encodes a batch the way vLLM's publisher does (msgspec array_like with
// tags): [ts, [["BlockStored", hashes, parent, token_ids, block_size, lora_id,
// medium], ...], rank]. Integer hashes go out as unsigned 64-bit integers,
// bytes hashes as bin; an empty medium as nil. decode_batch() reads it back.
std::string encode_batch(const Batch& batch);

// The 8-byte big-endian sequence frame; nullopt if it is not 8 bytes.
std::optional<uint64_t> decode_sequence(std::string_view frame);

// Per-publisher sequence tracking. vLLM numbers each publisher's messages
// 0, 1, 2...; a jump means messages were lost (a slow subscriber, a late
// join is not a gap: the first message sets the start).
class SequenceTracker {
 public:
  struct Gap {
    uint64_t first_missing = 0;  // replay from here
    uint64_t next = 0;           // the message that revealed the gap
    uint64_t size() const { return next - first_missing; }
  };
  // Records seq as received. Returns the gap it reveals, if any. A sequence
  // at or below the last one means the publisher restarted: tracking resets
  // and restarts() counts it.
  std::optional<Gap> observe(uint64_t seq);
  std::optional<uint64_t> last() const { return last_; }
  uint64_t gaps() const { return gaps_; }
  uint64_t restarts() const { return restarts_; }

 private:
  std::optional<uint64_t> last_;
  uint64_t gaps_ = 0;
  uint64_t restarts_ = 0;
};

}  // namespace rc::kv_events
