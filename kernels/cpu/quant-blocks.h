// The byte layouts of the quantized storage types, identical to GGML's
// block_q4_0 / q5_0 / q5_1 / q8_0 / q4_K / q5_K / q6_K (ggml-common.h). They are
// read straight out of mmapped GGUF files, so field order and sizes are the
// file format; the static_asserts pin them.
#pragma once

#include <cstdint>

namespace rc::kernels {

inline constexpr int kQK = 32;    // elements per Q4_0 / Q5_0 / Q5_1 / Q8_0 block
inline constexpr int kQKK = 256;  // elements per K-quant super-block

// x[j] = d * (q[j] - 8); byte qs[j] holds element j (low nibble) and j + 16 (high).
struct BlockQ4_0 {
  uint16_t d;  // fp16
  uint8_t qs[kQK / 2];
};

// x[j] = d * (q[j] - 16), q 5-bit: byte qs[j] holds the low 4 bits of
// elements j (low nibble) and j + 16 (high); bit j of the little-endian
// 32-bit qh is the 5th bit of element j.
struct BlockQ5_0 {
  uint16_t d;  // fp16
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};

// x[j] = d * q[j] + m, q 5-bit laid out as in BlockQ5_0.
struct BlockQ5_1 {
  uint16_t d;  // fp16
  uint16_t m;  // fp16
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};

// x[j] = d * qs[j]
struct BlockQ8_0 {
  uint16_t d;  // fp16
  int8_t qs[kQK];
};

// Eight sub-blocks of 32: x = d * sc[j] * q - dmin * m[j], with 6-bit sc/m
// packed in `scales` (see q4k_scale_min) and 4-bit q. Sub-blocks 2i and 2i+1
// share qs[32i .. 32i+32): low nibbles are sub-block 2i, high nibbles 2i+1.
struct BlockQ4_K {
  uint16_t d;     // fp16, scale of the sub-block scales
  uint16_t dmin;  // fp16, scale of the sub-block mins
  uint8_t scales[12];
  uint8_t qs[kQKK / 2];
};

// Q4_K with a 5th bit per quant: x = d * sc[j] * q - dmin * m[j], q 5-bit.
// Low 4 bits as in Q4_K; bit j of qh[l] is the 5th bit of element l of
// sub-block j (l < 32).
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};

// Sixteen sub-blocks of 16: x = d * scales[j] * (q - 32), q 6-bit. Within each
// half of 128 elements, element l (l < 32) of the four quarters reads
// ql[l] low, ql[l+32] low, ql[l] high, ql[l+32] high nibbles for its 4 low
// bits and bits (0,1), (2,3), (4,5), (6,7) of qh[l] for its 2 high bits.
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;  // fp16
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);

// 6-bit scale and min of Q4_K (and Q5_K) sub-block j (0..7): j < 4 keep them in the low
// 6 bits of bytes j and j+4; j >= 4 split them into a nibble of byte j+4 and
// the top two bits of bytes j-4 (scale) and j (min).
inline void q4k_scale_min(int j, const uint8_t* s, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = uint8_t((s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4));
    *m = uint8_t((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

// The 5th bit (as 0 or 16) of element l of sub-block j: Q5_K's qh, none
// for Q4_K; lets one template read both affine K-quants.
inline int k_high_bit(const BlockQ4_K&, int, int) { return 0; }
inline int k_high_bit(const BlockQ5_K& b, int j, int l) { return ((b.qh[l] >> j) & 1) << 4; }

}  // namespace rc::kernels
