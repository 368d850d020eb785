// The CUDA plugin's only export (contract in ../cuda-plugin-abi.h). Built
// into libradixchat-cuda.so with hidden visibility, so this table is all the
// loader can reach; the CUDA runtime is linked statically and cuBLAS is the
// plugin's only CUDA library dependency.
#include "cuda-backend.h"
#include "cuda-plugin-abi.h"
#include "device-query.cuh"

namespace {

rc::kernels::CudaDeviceAnswer query_device() {
  const rc::kernels::cuda::DeviceQuery q = rc::kernels::cuda::query_first_device();
  return {q.usable, q.name, q.reason};
}

const rc::kernels::CudaPluginApi kApi{
    rc::kernels::kCudaPluginAbi,
    rc::kernels::kCudaPluginBuild,
    &query_device,
    &rc::kernels::cuda::make_cuda_backend,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const rc::kernels::CudaPluginApi*
radixchat_cuda_plugin_v1() {
  return &kApi;
}
