// Storage types of weights, with the exact block layouts of the GGUF
// ecosystem. Enum values are GGUF's ggml_type ids, so the GGUF reader maps a
// file's type id directly; ids not listed here are unsupported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace rc::kernels {

enum class DType : uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,  // block of 32: f16 d, 16 bytes of 4-bit quants (low nibbles = elems 0..15)
  q5_0 = 6,  // block of 32: f16 d, 4 bytes of 5th bits, 16 bytes of 4-bit quants
  q5_1 = 7,  // block of 32: f16 d, f16 m, 4 bytes of 5th bits, 16 bytes of 4-bit quants
  q8_0 = 8,  // block of 32: f16 d, 32 x int8
  q4_k =
      12,  // super-block of 256: f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes quants
  q5_k = 13,  // as q4_k plus 32 bytes of 5th bits before the 128 bytes of quants
  q6_k = 14,  // super-block of 256: 128 bytes ql, 64 bytes qh, 16 x int8 scales, f16 d
  bf16 = 30,
};

// Elements per block (1 for the float types).
int64_t block_elems(DType t);
// Bytes per block.
int64_t block_bytes(DType t);
// Bytes of a row of `n` elements; n must be a multiple of block_elems(t).
int64_t row_bytes(DType t, int64_t n);
const char* dtype_name(DType t);
// nullopt for a GGUF type id that RadixChat does not support.
std::optional<DType> dtype_from_gguf(uint32_t ggml_type);
// "F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K": for error messages.
const char* supported_dtypes_list();

}  // namespace rc::kernels
