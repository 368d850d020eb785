// Activations quantized to 8 bits for integer dot products with quantized
// weights (the trick that makes decode memory-bound instead of
// compute-bound: the inner loop is int8 x int8 multiply-adds).
//
// Numerical contract of the fast CPU backend: a matmul with a quantized
// weight (Q4_0, Q8_0, Q4_K, Q6_K) sees its activation row rounded to Q8A
// blocks, i.e. it computes dequantize(w) . dequantize_act_q8(quantize_act_q8(x))
// up to fp32 rounding, for every n (decode and prefill alike), so a token's
// result does not depend on how the prompt was chunked or cached. Float
// weights (F32, F16, BF16) see the fp32 activation unchanged.
#pragma once

#include <cstdint>

namespace rc::kernels {

// 32 activations: x[j] ~= d * qs[j]. d is fp32 (unlike GGML's Q8_0, whose
// fp16 scale would add error for nothing: the block never leaves memory).
// sum[h] = sum of qs[16h .. 16h+16), for the offset terms of Q4_0/Q4_K/Q6_K.
struct BlockQ8A {
  float d;
  int16_t sum[2];
  int8_t qs[32];
};
static_assert(sizeof(BlockQ8A) == 40);

// n a multiple of 32. Round to nearest even of x / (max|x| / 127).
void quantize_act_q8(const float* x, BlockQ8A* y, int64_t n);
void dequantize_act_q8(const BlockQ8A* x, float* y, int64_t n);

}  // namespace rc::kernels
