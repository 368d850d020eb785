// A stand-in for libradixchat-cuda.so that exports the entry point with a
// table from "another build" (wrong abi, or a different build string, as
// chosen by FAKE_PLUGIN_ABI / FAKE_PLUGIN_BUILD at compile time). The
// loader must refuse it and say why; it must never call its functions.
#include <cstdlib>

#include "cuda-plugin-abi.h"

namespace {

rc::kernels::CudaDeviceAnswer never_query() { std::abort(); }
std::unique_ptr<rc::kernels::Backend> never_make(std::string*) { std::abort(); }

const rc::kernels::CudaPluginApi kApi{FAKE_PLUGIN_ABI, FAKE_PLUGIN_BUILD, &never_query,
                                      &never_make};

}  // namespace

extern "C" __attribute__((visibility("default"))) const rc::kernels::CudaPluginApi*
radixchat_cuda_plugin_v1() {
  return &kApi;
}
