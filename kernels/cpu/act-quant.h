// Activations quantized to 8 bits for integer dot products with quantized
// weights (the trick that makes decode memory-bound instead of
// compute-bound: the inner loop is int8 x int8 multiply-adds).
//
// Numerical contract of the fast CPU backend: a matmul with a quantized
// weight sees its activation row rounded to 8-bit blocks, i.e. it computes
//   dequantize(w) . dequantize_act(f, quantize_act(f, x)),  f = act_format(w.type)
// up to fp32 rounding, for every n (decode and prefill alike), so a token's
// result does not depend on how the prompt was chunked or cached. Q4_0, Q5_0,
// Q5_1 and Q8_0 pair with blocks of 32, the K-quants with blocks of 256 (one scale per
// super-block, so a whole super-block accumulates in integers), as GGML
// does. Float weights (F32, F16, BF16) see the fp32 activation unchanged.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "simd-level.h"

namespace rc::kernels {

enum class ActFormat {
  f32,     // the fp32 row itself
  q8_32,   // BlockQ8A per 32 elements
  q8_256,  // BlockQ8K per 256 elements
};

// 32 activations: x[j] ~= d * qs[j]. d is fp32 (unlike GGML's Q8_0, whose
// fp16 scale would add error for nothing: the block never leaves memory).
// sum[h] = sum of qs[16h .. 16h+16), for the offsets of Q4_0 / Q5_0 and
// the min of Q5_1.
struct BlockQ8A {
  float d;
  int16_t sum[2];
  int8_t qs[32];
};
static_assert(sizeof(BlockQ8A) == 40);

// 256 activations: x[j] ~= d * qs[j]; bsum[i] = sum of qs[32i .. 32i+32),
// for the mins of Q4_K / Q5_K; sum16[i] = sum of qs[16i .. 16i+16), for the
// 32 offset of Q6_K's quants (one per 16-element sub-block).
struct BlockQ8K {
  float d;
  int16_t bsum[8];
  int16_t sum16[16];
  int8_t qs[256];
};
static_assert(sizeof(BlockQ8K) == 308);

ActFormat act_format(DType weight_type);
// Bytes of one activation row of n elements (n a multiple of the block).
int64_t act_row_bytes(ActFormat f, int64_t n);
// Round to nearest even of x / (max|x| / 127) per block; f32 copies.
void quantize_act(ActFormat f, const float* x, void* dst, int64_t n);
void dequantize_act(ActFormat f, const void* src, float* y, int64_t n);

// quantize_act for a SIMD level; every level writes the same bytes.
using QuantizeActFn = void (*)(ActFormat f, const float* x, void* dst, int64_t n);
QuantizeActFn quantize_act_fn(SimdLevel level);
void quantize_act_avx2(ActFormat f, const float* x, void* dst, int64_t n);

}  // namespace rc::kernels
