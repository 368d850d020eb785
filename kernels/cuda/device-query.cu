#include "device-query.cuh"

#include <cuda_runtime.h>

namespace rc::kernels::cuda {

DeviceQuery query_first_device() {
  DeviceQuery q;
  int count = 0;
  // Without a driver this returns cudaErrorInsufficientDriver (35); with a
  // driver and no device, cudaErrorNoDevice (100). Both mean "use the CPU".
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    q.reason = std::string("no CUDA device: ") + cudaGetErrorString(err);
    return q;
  }
  if (count == 0) {
    q.reason = "no CUDA device: the driver reports none";
    return q;
  }
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, 0);
  if (err != cudaSuccess) {
    q.reason = std::string("CUDA device 0 unusable: ") + cudaGetErrorString(err);
    return q;
  }
  q.name = prop.name;
  q.compute_major = prop.major;
  q.compute_minor = prop.minor;
  if (cudaSetDevice(0) != cudaSuccess || cudaMemGetInfo(&q.free_bytes, &q.total_bytes) != cudaSuccess) {
    q.reason = "CUDA device 0 did not accept a context";
    return q;
  }
  q.usable = true;
  q.reason = "CUDA device answered";
  return q;
}

}  // namespace rc::kernels::cuda
