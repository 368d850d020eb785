#include "lane-pack.h"

#include <cstring>

#include "act-quant.h"
#include "qgemm-avx2-lanes.h"

namespace rc::kernels {

namespace {

int64_t extra_bytes(const LaneFormat& f, DType t, int64_t K) {
  if (t == DType::q8_0) return 0;
  if (t == DType::q6_k) return (f.q6_pair_sums ? K / 32 : K / 16) * f.lanes * 4;
  return K / 256 * 4 * f.lanes * 4;
}
int64_t scale_bytes(const LaneFormat& f, DType t, int64_t K) {
  return K / block_elems(t) * f.lanes * 4;
}

}  // namespace

LaneKernel lane_kernel_512(DType t) {
  return {q512_fn(t),       kQ512Tokens,    q512_tile_rows(t),
          q512_group_bytes, q512_pack_acts, q512_scratch_bytes};
}

LaneKernel lane_kernel_256(DType t) {
  return {q256_fn(t), kQ256Tokens, kQ256Rows, q256_group_bytes, q256_pack_acts, q256_scratch_bytes};
}

int64_t lane_group_bytes(const LaneFormat& f, DType t, int64_t K) {
  return K * f.lanes + scale_bytes(f, t, K) + extra_bytes(f, t, K);
}

void lane_pack_acts(const LaneFormat& f, DType t, const uint8_t* act, int64_t act_stride,
                    int tokens, int64_t K, uint8_t* dst) {
  const int64_t L = f.lanes;
  const bool q8 = t == DType::q8_0, offset = q8 && f.q8_offset;
  // Missing tokens: zero activations (offset ones stored as 128).
  std::memset(dst, offset ? 0x80 : 0, size_t(K * L));
  std::memset(dst + K * L, 0, size_t(scale_bytes(f, t, K) + extra_bytes(f, t, K)));
  auto* d = reinterpret_cast<float*>(dst + K * L);
  auto* extra = reinterpret_cast<int32_t*>(dst + K * L + scale_bytes(f, t, K));
  for (int tok = 0; tok < tokens; ++tok) {
    const uint8_t* row = act + tok * act_stride;
    auto put4 = [&](int64_t e, const int8_t* src) {
      uint8_t* p = dst + (e / 4 * L + tok) * 4;
      std::memcpy(p, src, 4);
      if (offset) {
        for (int k = 0; k < 4; ++k) p[k] ^= 0x80;  // x + 128 as an unsigned byte
      }
    };
    if (q8) {
      const auto* x = reinterpret_cast<const BlockQ8A*>(row);
      for (int64_t b = 0; b < K / 32; ++b) {
        for (int e = 0; e < 32; e += 4) put4(32 * b + e, x[b].qs + e);
        d[b * L + tok] = x[b].d;
      }
      continue;
    }
    const auto* x = reinterpret_cast<const BlockQ8K*>(row);
    for (int64_t i = 0; i < K / 256; ++i) {
      for (int e = 0; e < 256; e += 4) put4(256 * i + e, x[i].qs + e);
      d[i * L + tok] = x[i].d;
      if (t == DType::q6_k) {
        const int16_t* sums = x[i].sum16;
        if (f.q6_pair_sums) {
          for (int p = 0; p < 8; ++p) {
            const uint32_t lo = uint16_t(sums[2 * p]), hi = uint16_t(sums[2 * p + 1]);
            extra[(8 * i + p) * L + tok] = int32_t(lo | (hi << 16));
          }
        } else {
          for (int c = 0; c < 16; ++c) extra[(16 * i + c) * L + tok] = -32 * sums[c];
        }
      } else {
        for (int p = 0; p < 4; ++p) {
          const uint32_t lo = uint16_t(x[i].bsum[2 * p]), hi = uint16_t(x[i].bsum[2 * p + 1]);
          extra[(4 * i + p) * L + tok] = int32_t(lo | (hi << 16));
        }
      }
    }
  }
}

int64_t kquant_row_bytes(DType t, int64_t K) {
  return (K + 4 * kquant_sub_blocks(t, K) + K / 256 * (4 + 4 + 16) + 63) / 64 * 64;
}

}  // namespace rc::kernels
