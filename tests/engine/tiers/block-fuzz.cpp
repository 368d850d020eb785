// libFuzzer target: any bytes through the block reader. A block it accepts
// must re-encode to exactly the bytes given, and nothing may crash.
//   CXX=clang++ CC=clang cmake -S . -B build-fuzz -G Ninja -DRADIXCHAT_FUZZ=ON \
//       -DRADIXCHAT_GUI=OFF -DRADIXCHAT_CUDA=OFF
//   cmake --build build-fuzz --target block-fuzz && build-fuzz/tests/engine/tiers/block-fuzz
#include <cstdint>
#include <cstdlib>

#include "tier-fixtures.h"
#include "tiers/block-format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rc::tiers;
  static const Keyspace space = testing::small_space(1, rc::kernels::DType::f16, 2);
  static const Block seed = testing::make_block(space, BlockKey{}, 1);
  std::span<const uint8_t> bytes(data, size);
  // Read both under the seed block's key and under the key the bytes claim
  // (offset of the block key in the header), so accepted blocks are reachable.
  BlockKey claimed;
  const size_t key_at = block_header_bytes() - 12 - 16;
  if (size >= key_at + 16) std::copy(data + key_at, data + key_at + 16, claimed.bytes.begin());
  for (const BlockKey& key : {seed.key, claimed}) {
    Decoded d = decode_block(space, key, bytes);
    if (d.fault != BlockFault::none) continue;
    rc::Result<std::vector<uint8_t>> again = encode_block(space, d.block);
    if (!again.ok() || again.value() != std::vector<uint8_t>(data, data + size)) std::abort();
  }
  return 0;
}
