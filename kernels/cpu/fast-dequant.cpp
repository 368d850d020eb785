#include "fast-dequant.h"

#include "quant.h"

namespace rc::kernels {
namespace {

template <DType T>
void deq_ref(const void* src, float* dst, int64_t n) {
  dequantize_row(T, src, dst, n);
}

}  // namespace

DequantRowFn dequant_row_fn(DType t, SimdLevel level) {
  if (level == SimdLevel::avx2) return dequant_row_avx2(t);
  switch (t) {
    case DType::f32:
      return deq_ref<DType::f32>;
    case DType::f16:
      return deq_ref<DType::f16>;
    case DType::bf16:
      return deq_ref<DType::bf16>;
    case DType::q8_0:
      return deq_ref<DType::q8_0>;
    case DType::q4_0:
      return deq_ref<DType::q4_0>;
    case DType::q5_0:
      return deq_ref<DType::q5_0>;
    case DType::q5_1:
      return deq_ref<DType::q5_1>;
    case DType::q5_k:
      return deq_ref<DType::q5_k>;
    case DType::q4_k:
      return deq_ref<DType::q4_k>;
    case DType::q6_k:
      return deq_ref<DType::q6_k>;
  }
  return nullptr;
}

}  // namespace rc::kernels
