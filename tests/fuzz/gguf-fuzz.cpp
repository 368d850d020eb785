// libFuzzer target for the GGUF reader and everything that reads a GGUF
// (see gguf-fuzz-harness.h). Built only with clang and RADIXCHAT_FUZZ=ON:
//   CXX=clang++ CC=clang cmake -S . -B build-fuzz -G Ninja -DRADIXCHAT_FUZZ=ON -DRADIXCHAT_GUI=OFF
//   cmake --build build-fuzz --target gguf-fuzz
//   mkdir -p /tmp/gguf-corpus && build-fuzz/tests/fuzz/gguf-fuzz /tmp/gguf-corpus tests/fuzz/corpus
//   \
//       -max_total_time=300 -max_len=65536 -rss_limit_mb=2048
// Inputs that crash go into tests/fuzz/corpus/ (the replay test runs them
// in every build).
#include <cstddef>
#include <cstdint>

#include "gguf-fuzz-harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rc::testing::fuzz_gguf_once(data, size);
  return 0;
}
