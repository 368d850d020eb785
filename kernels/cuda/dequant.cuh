// Device-side decoding of every weight storage type, shared by get_rows,
// the decode GEMV and the prefill dequantize-to-fp16 path.
//
// The unit of work is a segment: 8 consecutive weights of a row in storage
// order, decoded into w[8]. w[0..3] are elements e0 .. e0+3 of the row and
// w[4..7] are elements e1 .. e1+3 (e1 == e0 + 4 for every type but Q4_0,
// whose byte j packs elements j and j + 16 of its block). A row of K
// elements has K / 8 segments; the float types need K % 8 == 0 for this
// path (get_rows and the GEMV fall back to scalar loads otherwise), the
// block types have it by construction.
//
// Exactness: every value is computed with the same operations, in the same
// order and rounding as kernels/cpu/quant.cpp's dequantize_row (the __f*_rn
// intrinsics stop nvcc from contracting a*b - c into an FMA), so get_rows
// on the device is bit-identical to the CPU.
//
// Host and device: every decoder is also compiled for the host (plain C++
// arithmetic there, which g++ does not contract either), so a CPU test pins
// the segment layouts against dequantize_row where no GPU is available.
//
// Alignment: row bases are 16-byte aligned for F32/F16/BF16 (K % 8 == 0),
// Q4_K (144-byte blocks) and Q5_K (176); Q8_0 (34), Q4_0 (18), Q5_0 (22),
// Q5_1 (24) and Q6_K (210) blocks are only read as 16-bit words (2-byte
// alignment is all they need).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cpu/fp16.h"
#include "dtype.h"

namespace rc::kernels::cuda {

struct Seg8 {
  float w[8];
  int e0, e1;
};

#define RC_HD __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define RC_UNROLL _Pragma("unroll")
#else
#define RC_UNROLL
#endif

RC_HD float half_bits_to_f32(uint16_t h) {
#ifdef __CUDA_ARCH__
  return __half2float(__ushort_as_half(h));
#else
  return fp16_to_f32_portable(h);
#endif
}
RC_HD float bf16_bits_to_f32(uint16_t h) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(uint32_t(h) << 16);
#else
  return bf16_to_f32(h);
#endif
}
// Rounded product and difference that are never fused into an FMA.
RC_HD float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
RC_HD float sub_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
RC_HD float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
RC_HD uint16_t load_u16(const uint8_t* p) { return *reinterpret_cast<const uint16_t*>(p); }
// 8 bytes from a 2-byte aligned address.
RC_HD void load8_u16(const uint8_t* p, uint8_t out[8]) {
  const uint16_t* q = reinterpret_cast<const uint16_t*>(p);
  RC_UNROLL
  for (int i = 0; i < 4; ++i) {
    const uint16_t v = q[i];
    out[2 * i] = uint8_t(v & 0xff);
    out[2 * i + 1] = uint8_t(v >> 8);
  }
}

template <DType T>
RC_HD void decode_seg(const uint8_t* row, int s, Seg8& g);

template <>
RC_HD void decode_seg<DType::f32>(const uint8_t* row, int s, Seg8& g) {
  const float4* p = reinterpret_cast<const float4*>(row) + 2 * s;
  const float4 a = p[0], b = p[1];
  g.w[0] = a.x, g.w[1] = a.y, g.w[2] = a.z, g.w[3] = a.w;
  g.w[4] = b.x, g.w[5] = b.y, g.w[6] = b.z, g.w[7] = b.w;
  g.e0 = 8 * s;
  g.e1 = 8 * s + 4;
}

template <>
RC_HD void decode_seg<DType::f16>(const uint8_t* row, int s, Seg8& g) {
  const uint4 v = reinterpret_cast<const uint4*>(row)[s];
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
  RC_UNROLL
  for (int i = 0; i < 4; ++i) {
    g.w[2 * i] = half_bits_to_f32(uint16_t(u[i] & 0xffff));
    g.w[2 * i + 1] = half_bits_to_f32(uint16_t(u[i] >> 16));
  }
  g.e0 = 8 * s;
  g.e1 = 8 * s + 4;
}

template <>
RC_HD void decode_seg<DType::bf16>(const uint8_t* row, int s, Seg8& g) {
  const uint4 v = reinterpret_cast<const uint4*>(row)[s];
  const uint32_t u[4] = {v.x, v.y, v.z, v.w};
  RC_UNROLL
  for (int i = 0; i < 4; ++i) {
    g.w[2 * i] = bf16_bits_to_f32(uint16_t(u[i] & 0xffff));
    g.w[2 * i + 1] = bf16_bits_to_f32(uint16_t(u[i] >> 16));
  }
  g.e0 = 8 * s;
  g.e1 = 8 * s + 4;
}

// Q8_0: 34-byte blocks {f16 d; int8 qs[32]}, four segments per block.
template <>
RC_HD void decode_seg<DType::q8_0>(const uint8_t* row, int s, Seg8& g) {
  const uint8_t* blk = row + (s / 4) * 34;
  const int part = s % 4;
  const float d = half_bits_to_f32(load_u16(blk));
  uint8_t q[8];
  load8_u16(blk + 2 + 8 * part, q);
  RC_UNROLL
  for (int i = 0; i < 8; ++i) g.w[i] = mul_rn(d, float(int8_t(q[i])));
  g.e0 = (s / 4) * 32 + 8 * part;
  g.e1 = g.e0 + 4;
}

// Q4_0: 18-byte blocks {f16 d; uint8 qs[16]}; segment `part` reads bytes
// 4*part .. 4*part+3: low nibbles are elements 4*part.., high ones 16+4*part..
template <>
RC_HD void decode_seg<DType::q4_0>(const uint8_t* row, int s, Seg8& g) {
  const uint8_t* blk = row + (s / 4) * 18;
  const int part = s % 4;
  const float d = half_bits_to_f32(load_u16(blk));
  const uint16_t lo = load_u16(blk + 2 + 4 * part), hi = load_u16(blk + 4 + 4 * part);
  const uint8_t q[4] = {uint8_t(lo & 0xff), uint8_t(lo >> 8), uint8_t(hi & 0xff), uint8_t(hi >> 8)};
  RC_UNROLL
  for (int i = 0; i < 4; ++i) {
    g.w[i] = mul_rn(d, float(int(q[i] & 0xf) - 8));
    g.w[4 + i] = mul_rn(d, float(int(q[i] >> 4) - 8));
  }
  g.e0 = (s / 4) * 32 + 4 * part;
  g.e1 = g.e0 + 16;
}

// Q4_K / Q5_K: d * sc[j] and dmin * m[j] of sub-block j, from the block's
// {f16 d, dmin; uint8 scales[12]} head (6-bit fields as q4k_scale_min).
RC_HD void k_scale_min(const uint8_t* blk, int j, float* scale, float* min) {
  const float d = half_bits_to_f32(load_u16(blk));
  const float dmin = half_bits_to_f32(load_u16(blk + 2));
  const uint8_t* sc6 = blk + 4;
  uint8_t sc, m;
  if (j < 4) {
    sc = sc6[j] & 63;
    m = sc6[j + 4] & 63;
  } else {
    sc = uint8_t((sc6[j + 4] & 0xf) | ((sc6[j - 4] >> 6) << 4));
    m = uint8_t((sc6[j + 4] >> 4) | ((sc6[j] >> 6) << 4));
  }
  *scale = mul_rn(d, float(sc));
  *min = mul_rn(dmin, float(m));
}

// Q5_0 / Q5_1: {f16 d; [f16 m;] uint32 qh; uint8 qs[16]} (22 / 24 bytes).
// Segment `part` reads nibble bytes 4*part .. 4*part+3 as Q4_0 does and the
// matching 5th bits: qh bits 4*part.. (low nibbles) and 16+4*part.. (high).
template <bool kMin>
RC_HD void decode_q5_seg(const uint8_t* row, int s, Seg8& g) {
  constexpr int kBytes = kMin ? 24 : 22, kQh = kMin ? 4 : 2;
  const uint8_t* blk = row + (s / 4) * kBytes;
  const int part = s % 4;
  const float d = half_bits_to_f32(load_u16(blk));
  const uint32_t h = uint32_t(load_u16(blk + kQh)) | (uint32_t(load_u16(blk + kQh + 2)) << 16);
  const uint8_t* qs = blk + kQh + 4;
  const uint16_t lo = load_u16(qs + 4 * part), hi = load_u16(qs + 4 * part + 2);
  const uint8_t q[4] = {uint8_t(lo & 0xff), uint8_t(lo >> 8), uint8_t(hi & 0xff), uint8_t(hi >> 8)};
  RC_UNROLL
  for (int i = 0; i < 4; ++i) {
    const int q0 = int(q[i] & 0xf) | int(((h >> (4 * part + i)) & 1) << 4);
    const int q1 = int(q[i] >> 4) | int(((h >> (16 + 4 * part + i)) & 1) << 4);
    if constexpr (kMin) {
      const float m = half_bits_to_f32(load_u16(blk + 2));
      g.w[i] = add_rn(mul_rn(d, float(q0)), m);
      g.w[4 + i] = add_rn(mul_rn(d, float(q1)), m);
    } else {
      g.w[i] = mul_rn(d, float(q0 - 16));
      g.w[4 + i] = mul_rn(d, float(q1 - 16));
    }
  }
  g.e0 = (s / 4) * 32 + 4 * part;
  g.e1 = g.e0 + 16;
}
template <>
RC_HD void decode_seg<DType::q5_0>(const uint8_t* row, int s, Seg8& g) {
  decode_q5_seg<false>(row, s, g);
}
template <>
RC_HD void decode_seg<DType::q5_1>(const uint8_t* row, int s, Seg8& g) {
  decode_q5_seg<true>(row, s, g);
}

// Q4_K: 144-byte super-blocks {f16 d, dmin; uint8 scales[12]; uint8 qs[128]};
// 32 segments each, segment t covers elements 8t .. 8t+7, in sub-block t / 4.
template <>
RC_HD void decode_seg<DType::q4_k>(const uint8_t* row, int s, Seg8& g) {
  const uint8_t* blk = row + (s / 32) * 144;
  const int t = s % 32, j = t / 4, l0 = (t % 4) * 8;
  float scale, min;
  k_scale_min(blk, j, &scale, &min);
  const uint2 v = *reinterpret_cast<const uint2*>(blk + 16 + 32 * (j / 2) + l0);
  const int shift = (j & 1) * 4;
  RC_UNROLL
  for (int i = 0; i < 8; ++i) {
    const uint32_t word = i < 4 ? v.x : v.y;
    const int q = int((word >> (8 * (i % 4) + shift)) & 0xf);
    g.w[i] = sub_rn(mul_rn(scale, float(q)), min);
  }
  g.e0 = (s / 32) * 256 + 8 * t;
  g.e1 = g.e0 + 4;
}

// Q5_K: 176-byte super-blocks {f16 d, dmin; uint8 scales[12]; uint8 qh[32];
// uint8 qs[128]}; segments as Q4_K, plus bit j of qh[l0 + i] as the 5th bit.
template <>
RC_HD void decode_seg<DType::q5_k>(const uint8_t* row, int s, Seg8& g) {
  const uint8_t* blk = row + (s / 32) * 176;
  const int t = s % 32, j = t / 4, l0 = (t % 4) * 8;
  float scale, min;
  k_scale_min(blk, j, &scale, &min);
  const uint2 v = *reinterpret_cast<const uint2*>(blk + 48 + 32 * (j / 2) + l0);
  const uint2 hv = *reinterpret_cast<const uint2*>(blk + 16 + l0);
  const int shift = (j & 1) * 4;
  RC_UNROLL
  for (int i = 0; i < 8; ++i) {
    const uint32_t word = i < 4 ? v.x : v.y;
    const uint32_t hword = i < 4 ? hv.x : hv.y;
    const int q =
        int((word >> (8 * (i % 4) + shift)) & 0xf) | int(((hword >> (8 * (i % 4) + j)) & 1) << 4);
    g.w[i] = sub_rn(mul_rn(scale, float(q)), min);
  }
  g.e0 = (s / 32) * 256 + 8 * t;
  g.e1 = g.e0 + 4;
}

// Q6_K: 210-byte super-blocks {uint8 ql[128], qh[64]; int8 scales[16]; f16 d}.
// Segment t: half t / 16, quarter (t % 16) / 4, l0 = (t % 4) * 8; its
// elements 128*half + 32*quarter + l0 .. +7 (see quant-blocks.h).
template <>
RC_HD void decode_seg<DType::q6_k>(const uint8_t* row, int s, Seg8& g) {
  const uint8_t* blk = row + (s / 32) * 210;
  const int t = s % 32, half = t / 16, quarter = (t % 16) / 4, l0 = (t % 4) * 8;
  uint8_t ql[8], qh[8];
  load8_u16(blk + 64 * half + 32 * (quarter & 1) + l0, ql);
  load8_u16(blk + 128 + 32 * half + l0, qh);
  const int e_in_block = 128 * half + 32 * quarter + l0;
  const float d = half_bits_to_f32(load_u16(blk + 208));
  const float ds = mul_rn(d, float(int8_t(blk[192 + e_in_block / 16])));
  const int lo_shift = quarter < 2 ? 0 : 4;
  RC_UNROLL
  for (int i = 0; i < 8; ++i) {
    const int q = ((ql[i] >> lo_shift) & 0xf) | (((qh[i] >> (2 * quarter)) & 3) << 4);
    g.w[i] = mul_rn(ds, float(q - 32));
  }
  g.e0 = (s / 32) * 256 + e_in_block;
  g.e1 = g.e0 + 4;
}

// Element e of a row of a float type, for rows whose length is not a
// multiple of 8 (scalar path).
RC_HD float load_float_elem(DType t, const uint8_t* row, int64_t e) {
  switch (t) {
    case DType::f16:
      return half_bits_to_f32(reinterpret_cast<const uint16_t*>(row)[e]);
    case DType::bf16:
      return bf16_bits_to_f32(reinterpret_cast<const uint16_t*>(row)[e]);
    default:
      return reinterpret_cast<const float*>(row)[e];
  }
}

__host__ __device__ constexpr bool is_float_type(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16;
}

// Whether the segment loads of `t` may read rows starting at `base` (row
// strides keep the alignment of the base, see the top of this file).
inline bool seg_aligned(DType t, const void* base) {
  const auto a = reinterpret_cast<uintptr_t>(base);
  switch (t) {
    case DType::f32:
    case DType::f16:
    case DType::bf16:
    case DType::q4_k:
    case DType::q5_k:
      return a % 16 == 0;
    default:
      return a % 2 == 0;
  }
}

#undef RC_HD
#undef RC_UNROLL

}  // namespace rc::kernels::cuda
