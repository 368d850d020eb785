// One fuzz input through every path that reads a GGUF: the reader (strict
// and permissive), every typed accessor, model config and weight binding
// (touching the first and last byte of every bound tensor), the GGUF
// vocabulary -> sentencepiece tokenizer, chat-template choice; and, for
// inputs that are not GGUF, the sentencepiece ModelProto reader.
// Shared by the libFuzzer target and the corpus replay test.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rc::testing {

// Returns whether the input opened as a GGUF file.
bool fuzz_gguf_once(const uint8_t* data, size_t size);

}  // namespace rc::testing
