#include "get-rows.cuh"

#include <cmath>

#include "dequant.cuh"

namespace rc::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// One block per output row; each thread decodes whole segments.
template <DType T>
__global__ void get_rows_seg_kernel(const uint8_t* table, int64_t rows, int64_t row_bytes,
                                    int64_t cols, const int32_t* ids, float* out) {
  const int i = blockIdx.x;
  const int32_t id = ids[i];
  float* dst = out + int64_t(i) * cols;
  if (id < 0 || id >= rows) {
    for (int64_t e = threadIdx.x; e < cols; e += blockDim.x) dst[e] = NAN;
    return;
  }
  const uint8_t* row = table + int64_t(id) * row_bytes;
  const int segs = int(cols / 8);
  for (int s = threadIdx.x; s < segs; s += blockDim.x) {
    Seg8 g;
    decode_seg<T>(row, s, g);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      dst[g.e0 + k] = g.w[k];
      dst[g.e1 + k] = g.w[4 + k];
    }
  }
}

// Float types whose rows are not a whole number of segments.
__global__ void get_rows_scalar_kernel(DType t, const uint8_t* table, int64_t rows,
                                       int64_t row_bytes, int64_t cols, const int32_t* ids,
                                       float* out) {
  const int i = blockIdx.x;
  const int32_t id = ids[i];
  float* dst = out + int64_t(i) * cols;
  for (int64_t e = threadIdx.x; e < cols; e += blockDim.x) {
    dst[e] = (id < 0 || id >= rows) ? NAN : load_float_elem(t, table + int64_t(id) * row_bytes, e);
  }
}

template <DType T>
void launch_seg(const LaunchCtx& ctx, const void* table, int64_t rows, int64_t cols,
                const int32_t* ids, float* out, int n) {
  get_rows_seg_kernel<T><<<n, kThreads, 0, ctx.stream>>>(static_cast<const uint8_t*>(table), rows,
                                                         row_bytes(T, cols), cols, ids, out);
}

}  // namespace

void launch_get_rows(const LaunchCtx& ctx, DType type, const void* table, int64_t rows,
                     int64_t cols, const int32_t* ids, float* out, int n) {
  if (n <= 0 || cols <= 0) return;
  if (!is_float_type(type) && !seg_aligned(type, table)) {
    ctx.fail(std::string("get_rows: misaligned ") + dtype_name(type) + " table");
    return;
  }
  if (is_float_type(type) && (cols % 8 != 0 || !seg_aligned(type, table))) {
    get_rows_scalar_kernel<<<n, kThreads, 0, ctx.stream>>>(
        type, static_cast<const uint8_t*>(table), rows, row_bytes(type, cols), cols, ids, out);
  } else {
    switch (type) {
      case DType::f32:
        launch_seg<DType::f32>(ctx, table, rows, cols, ids, out, n);
        break;
      case DType::f16:
        launch_seg<DType::f16>(ctx, table, rows, cols, ids, out, n);
        break;
      case DType::bf16:
        launch_seg<DType::bf16>(ctx, table, rows, cols, ids, out, n);
        break;
      case DType::q8_0:
        launch_seg<DType::q8_0>(ctx, table, rows, cols, ids, out, n);
        break;
      case DType::q4_0:
        launch_seg<DType::q4_0>(ctx, table, rows, cols, ids, out, n);
        break;
      case DType::q4_k:
        launch_seg<DType::q4_k>(ctx, table, rows, cols, ids, out, n);
        break;
      case DType::q5_0:
        launch_seg<DType::q5_0>(ctx, table, rows, cols, ids, out, n);
        break;
      case DType::q5_1:
        launch_seg<DType::q5_1>(ctx, table, rows, cols, ids, out, n);
        break;
      case DType::q5_k:
        launch_seg<DType::q5_k>(ctx, table, rows, cols, ids, out, n);
        break;
      case DType::q6_k:
        launch_seg<DType::q6_k>(ctx, table, rows, cols, ids, out, n);
        break;
    }
  }
  ctx.check_launch("get_rows");
}

}  // namespace rc::kernels::cuda
