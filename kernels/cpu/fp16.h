// Scalar conversions between fp32 and the 16-bit float storage types.
//
// fp16 is IEEE binary16; bf16 is the top half of a binary32. Both narrowing
// conversions round to nearest even, like F16C's VCVTPS2PH with imm 0 and
// like PyTorch/numpy, so weights written by quantize_row() match what the
// GGUF tools would write. The *_portable versions are pure bit manipulation
// and are the fallback where the compiler has no _Float16; tests check them
// against _Float16 on every one of the 65536 inputs.
#pragma once

#include <cstdint>
#include <cstring>

namespace rc::kernels {

inline float bits_to_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t f32_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float fp16_to_f32_portable(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return bits_to_f32(sign | 0x7f800000u | (mant << 13));  // inf / nan
  if (exp != 0) return bits_to_f32(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return bits_to_f32(sign);
  // Subnormal: value = mant * 2^-24, exactly representable in fp32.
  const float v = float(mant) * 5.9604644775390625e-8f;
  return sign ? -v : v;
}

inline uint16_t f32_to_fp16_portable(float f) {
  const uint32_t x = f32_to_bits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or nan (keep nan quiet and non-zero)
    return uint16_t(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 | ((ax >> 13) & 0x3ff) : 0));
  }
  if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // rounds to >= 65520: inf
  if (ax < 0x38800000u) {
    // Result is subnormal (or zero): scale so the fp16 subnormal unit is 1
    // and let the fp32 adder round to nearest even.
    const float scaled = bits_to_f32(ax) * 16777216.0f;  // * 2^24
    const float r = scaled + 8388608.0f - 8388608.0f;    // RNE to an integer
    return uint16_t(sign | uint16_t(r));
  }
  // Normal: drop 13 mantissa bits with round to nearest even; a carry into
  // the exponent is the correct result.
  const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1);
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

#if defined(__FLT16_MAX__)
inline float fp16_to_f32(uint16_t h) {
  _Float16 v;
  std::memcpy(&v, &h, 2);
  return float(v);
}
inline uint16_t f32_to_fp16(float f) {
  const _Float16 v = static_cast<_Float16>(f);
  uint16_t h;
  std::memcpy(&h, &v, 2);
  return h;
}
#else
inline float fp16_to_f32(uint16_t h) { return fp16_to_f32_portable(h); }
inline uint16_t f32_to_fp16(float f) { return f32_to_fp16_portable(f); }
#endif

inline float bf16_to_f32(uint16_t h) { return bits_to_f32(uint32_t(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
  const uint32_t x = f32_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet nan
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

}  // namespace rc::kernels
