#include "dtype.h"

#include "rc-assert.h"

namespace rc::kernels {

int64_t block_elems(DType t) {
  switch (t) {
    case DType::f32:
    case DType::f16:
    case DType::bf16:
      return 1;
    case DType::q4_0:
    case DType::q5_0:
    case DType::q5_1:
    case DType::q8_0:
      return 32;
    case DType::q4_k:
    case DType::q5_k:
    case DType::q6_k:
      return 256;
  }
  RC_ASSERT_MSG(false, "unknown DType");
}

int64_t block_bytes(DType t) {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::q4_0:
      return 2 + 16;
    case DType::q5_0:
      return 2 + 4 + 16;
    case DType::q5_1:
      return 2 + 2 + 4 + 16;
    case DType::q8_0:
      return 2 + 32;
    case DType::q4_k:
      return 2 + 2 + 12 + 128;
    case DType::q5_k:
      return 2 + 2 + 12 + 32 + 128;
    case DType::q6_k:
      return 128 + 64 + 16 + 2;
  }
  RC_ASSERT_MSG(false, "unknown DType");
}

int64_t row_bytes(DType t, int64_t n) {
  const int64_t be = block_elems(t);
  RC_ASSERT_MSG(n % be == 0, "row length is not a multiple of the block size");
  return n / be * block_bytes(t);
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "F32";
    case DType::f16:
      return "F16";
    case DType::bf16:
      return "BF16";
    case DType::q4_0:
      return "Q4_0";
    case DType::q5_0:
      return "Q5_0";
    case DType::q5_1:
      return "Q5_1";
    case DType::q8_0:
      return "Q8_0";
    case DType::q4_k:
      return "Q4_K";
    case DType::q5_k:
      return "Q5_K";
    case DType::q6_k:
      return "Q6_K";
  }
  return "?";
}

std::optional<DType> dtype_from_gguf(uint32_t ggml_type) {
  switch (ggml_type) {
    case 0:
      return DType::f32;
    case 1:
      return DType::f16;
    case 2:
      return DType::q4_0;
    case 6:
      return DType::q5_0;
    case 7:
      return DType::q5_1;
    case 8:
      return DType::q8_0;
    case 12:
      return DType::q4_k;
    case 13:
      return DType::q5_k;
    case 14:
      return DType::q6_k;
    case 30:
      return DType::bf16;
    default:
      return std::nullopt;
  }
}

const char* supported_dtypes_list() {
  return "F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K";
}

}  // namespace rc::kernels
