// Decode matmul (one token): y[r] = w[r] . x for every weight row. Quantized
// weights: AVX-512 VNNI on 512-bit registers, where the CPU has AVX-512
// F/BW/VL + VNNI. The row dots of row-dot.h serve every other CPU; this
// path exists because on AVX-512 machines those dots are bound by
// instruction throughput (about half the memory bandwidth for Q8_0 and the
// K-quants), not by reading the weights. Float weights: the AVX2 tiles'
// decode blocks (hdecode_avx2).
//
// Every kernel follows the tile kernels' numerical contract (qgemm.h):
// each block's integer dot is formed exactly, then scaled and added in the
// tiles' fp32 order, so a row's result is the same bits at n = 1 as in any
// prefill chunk (docs/architecture.md section 7).
//
// The activation row is prepared once per matmul into MatvecAct: the same
// 8-bit quants and scales as quantize_act (act-quant.h) produces for the
// weight's act_format, laid out so the inner loop needs no shuffles:
// - qs: the K quants contiguous; for Q4_K / Q5_K each 256-block's
//   32-element sub-blocks are stored in the order 0 2 1 3 4 6 5 7, matching
//   the low / high nibbles of the weight's 64-byte quant groups;
// - ns4[i] = -c * (qs[4i] + ... + qs[4i+3]) (natural order), where c is
//   the offset the weight quants carry as the kernels read them (Q8_0 read
//   as unsigned: 128, Q4_0: 8, Q5_0: 16, Q6_K: 32; else 0): it starts the
//   integer accumulator, so the offset costs nothing per weight byte;
// - d: one scale per activation block (32 or 256 elements);
// - ms[b] = d[b] * (sum of block b's quants), for the mins of Q5_1;
// - bsum: BlockQ8K::bsum of every 256-block (8 per block), for the mins of
//   Q4_K / Q5_K.
// Each array starts on a 64-byte boundary, so no 512-bit load of the
// activation straddles two cache lines.
// Float weights (F32, F16, BF16) read the fp32 row itself (act.x).
#pragma once

#include <cstdint>
#include <vector>

#include "act-quant.h"
#include "dtype.h"

namespace rc::kernels {

struct MatvecAct {
  int64_t K = 0;
  const float* x = nullptr;  // float weights: the fp32 row
  const int8_t* qs = nullptr;
  const int32_t* ns4 = nullptr;
  const float* d = nullptr;
  const float* ms = nullptr;
  const int16_t* bsum = nullptr;
};

// Owns the storage of a MatvecAct; reused across matmuls (no allocation once
// the largest K has been seen).
class MatvecActBuffer {
 public:
  // Quantizes x (K elements, a multiple of the weight type's block) with
  // `quantize` and lays it out for weights of type t. The returned view
  // stays valid until the next prepare; for float types it points at x.
  const MatvecAct& prepare(DType t, const float* x, int64_t K, QuantizeActFn quantize);

 private:
  MatvecAct act_;
  std::vector<uint8_t> raw_;  // quantize_act's row
  std::vector<int8_t> qs_;    // from a 64-byte boundary, 64 bytes of slack for full-width loads
  std::vector<int32_t> ns4_;
  std::vector<float> d_, ms_;
  std::vector<int16_t> bsum_;
};

// y[r] = dot(row r, act) for r in [0, rows); rows are w_stride bytes apart.
using MatvecFn = void (*)(const uint8_t* w, int64_t w_stride, int64_t rows, const MatvecAct& act,
                          float* y);

// The decode kernel the backend uses for t on an AVX2 backend (the caller
// checks the level), null where RADIXCHAT_CPU_MATVEC=0 is set or
// set_matvec_enabled(false) was called (for benchmarks comparing paths in
// one run). Quantized weights: the AVX-512 kernels, null where this CPU
// lacks AVX-512 F/BW/VL + VNNI. Float weights (F32, F16, BF16): the AVX2
// tiles' own decode blocks (hdecode_avx2), so decode's bits equal
// prefill's; null where the tiles are off (RADIXCHAT_CPU_QGEMM=off).
// Through this interface a decode step's q/k/v and gate/up matmuls share
// one region loop (CpuMatmul::run_many).
MatvecFn matvec_fn(DType t);
bool cpu_has_avx512_matvec();

// A short step (2 .. kMatvecMaxTokens tokens, as drafting's verifying steps
// and small batches make): y[t * ldy + r] = dot(row r, acts[t]), reading
// each weight row once for all the tokens, with the same bits per (row,
// token) as the one-token kernel and the tiles. Null where there is no such
// kernel for t or `tokens` (today: Q4_K, Q5_K and Q6_K on AVX-512 VNNI
// CPUs), and where matvec_fn is switched off.
inline constexpr int kMatvecMaxTokens = 7;
using MatvecManyFn = void (*)(const uint8_t* w, int64_t w_stride, int64_t rows,
                              const MatvecAct* acts, float* y, int64_t ldy);
MatvecManyFn matvec_many_fn(DType t, int tokens);
void set_matvec_enabled(bool on);

// The table of matvec-avx512.cpp: quantized types only (callers check
// cpu_has_avx512_matvec).
MatvecFn matvec_avx512(DType t);
// Its K-quant part (matvec-avx512-kquant.cpp): Q4_K, Q5_K and Q6_K, null
// for every other type; and their short-step kernels.
MatvecFn matvec_kquant_avx512(DType t);
MatvecManyFn matvec_many_kquant_avx512(DType t, int tokens);
// Float weights' decode (hgemm-avx2.cpp): each row exactly as the F16C +
// FMA tiles compute it (qgemm.h, htile_avx2) at any token count; needs AVX2,
// FMA and F16C.
MatvecFn hdecode_avx2(DType t);

}  // namespace rc::kernels
