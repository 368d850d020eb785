// A stand-in for the NVIDIA driver (libcuda.so.1) exporting the three
// driver-API calls the plugin loader asks before opening the plugin. The
// device count is FAKE_DRIVER_DEVICES, chosen at compile time; with 0,
// cuInit fails the way the real driver does on a machine without a GPU.
namespace {
constexpr int kNoDevice = 100;  // CUDA_ERROR_NO_DEVICE
}

extern "C" __attribute__((visibility("default"))) int cuInit(unsigned) {
  return FAKE_DRIVER_DEVICES > 0 ? 0 : kNoDevice;
}

extern "C" __attribute__((visibility("default"))) int cuDeviceGetCount(int* count) {
  *count = FAKE_DRIVER_DEVICES;
  return 0;
}

extern "C" __attribute__((visibility("default"))) int cuGetErrorName(int rc, const char** name) {
  *name = rc == kNoDevice ? "CUDA_ERROR_NO_DEVICE" : nullptr;
  return *name ? 0 : 1;
}
