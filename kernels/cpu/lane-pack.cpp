#include "lane-pack.h"

#include <cstring>

#include "act-quant.h"

namespace rc::kernels {

namespace {

bool k_quant(DType t) { return t == DType::q4_k || t == DType::q5_k || t == DType::q6_k; }

int64_t extra_bytes(const LaneFormat& f, DType t, int64_t K) {
  if (t == DType::q6_k) return (f.q6_pair_sums ? K / 32 : K / 16) * f.lanes * 4;
  if (k_quant(t)) return K / 256 * 4 * f.lanes * 4;
  return 0;
}
int64_t scale_bytes(const LaneFormat& f, DType t, int64_t K) {
  return K / block_elems(t) * f.lanes * 4;
}

}  // namespace

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
        int sums[16];
        for (int c = 0; c < 16; ++c) {
          sums[c] = 0;
          for (int j = 0; j < 16; ++j) sums[c] += x[i].qs[16 * c + j];
        }
        for (int c = 0; c < 16; ++c) {
          if (!f.q6_pair_sums) {
            extra[(16 * i + c) * L + tok] = -32 * sums[c];
          } else if (c % 2 == 0) {
            // |sum| <= 16 * 127: an int16.
            const uint32_t lo = uint16_t(sums[c]), hi = uint16_t(sums[c + 1]);
            extra[(8 * i + c / 2) * L + tok] = int32_t(lo | (hi << 16));
          }
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
  const int64_t sub = t == DType::q6_k ? K / 16 : K / 32;
  return (K + 4 * sub + K / 256 * (4 + 4 + 16) + 63) / 64 * 64;
}

}  // namespace rc::kernels
