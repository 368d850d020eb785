// The CUDA plugin loader; the contract and search order are in cuda-plugin.h.
#include "cuda-plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "cuda-plugin-abi.h"

// Set for this file only by kernels/CMakeLists.txt.
#ifndef RADIXCHAT_CUDA_BUILT
#define RADIXCHAT_CUDA_BUILT 0
#endif
#ifndef RADIXCHAT_BUILD_DIR
#define RADIXCHAT_BUILD_DIR ""
#endif
#ifndef RADIXCHAT_CUDA_LIBDIR
#define RADIXCHAT_CUDA_LIBDIR ""
#endif
#ifndef RADIXCHAT_CUDA_PRELOAD
#define RADIXCHAT_CUDA_PRELOAD ""
#endif

namespace rc::kernels {
namespace fs = std::filesystem;

namespace {

constexpr const char* kPluginFile = "libradixchat-cuda.so";
constexpr const char* kPluginSubdir = "lib/radixchat";

const CudaPluginApi* g_api = nullptr;

fs::path program_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

// True when `p` lies under `dir` (both absolute, lexically normalized).
bool is_under(const fs::path& p, const fs::path& dir) {
  const std::string a = p.lexically_normal().string(), b = dir.lexically_normal().string();
  return !b.empty() && a.size() > b.size() && a.compare(0, b.size(), b) == 0 && a[b.size()] == '/';
}

std::vector<fs::path> candidates() {
  std::vector<fs::path> out;
  const fs::path dir = program_dir();
  if (!dir.empty()) out.push_back(dir.parent_path() / kPluginSubdir / kPluginFile);
  const fs::path build = RADIXCHAT_BUILD_DIR;
  if (!dir.empty() && is_under(dir, build)) out.push_back(build / kPluginSubdir / kPluginFile);
  return out;
}

// dlopen's message, or a fallback when it has none.
std::string dl_error(const std::string& what) {
  const char* e = dlerror();
  return e ? std::string(e) : std::string(what);
}

// cuBLAS from the toolkit directory this build used, loaded globally so the
// plugin's NEEDED entries resolve to it. Only tried after a first failure.
void preload_toolkit_libraries() {
  const std::string dir = RADIXCHAT_CUDA_LIBDIR, names = RADIXCHAT_CUDA_PRELOAD;
  if (dir.empty()) return;
  size_t start = 0;
  while (start < names.size()) {
    size_t end = names.find(':', start);
    if (end == std::string::npos) end = names.size();
    const std::string lib = dir + "/" + names.substr(start, end - start);
    if (::access(lib.c_str(), R_OK) == 0) dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
    start = end + 1;
  }
}

// Opens `path` and checks its table; on failure the reason is in s.error.
void open_plugin(const fs::path& path, CudaPluginStatus& s) {
  s.path = path.string();
  void* handle = dlopen(s.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    s.error = dl_error("dlopen failed");
    preload_toolkit_libraries();
    handle = dlopen(s.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      dlerror();  // keep the first message: it names the missing library
      s.state = CudaPluginState::load_failed;
      return;
    }
  }
  // Never dlclose: backends made by the plugin run its code until exit.
  using Entry = const CudaPluginApi* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kCudaPluginEntry));
  const CudaPluginApi* api = entry ? entry() : nullptr;
  if (!api) {
    s.state = CudaPluginState::load_failed;
    s.error = std::string("no ") + kCudaPluginEntry + " in the plugin";
  } else if (api->abi != kCudaPluginAbi || !api->build ||
             std::strcmp(api->build, kCudaPluginBuild) != 0) {
    s.state = CudaPluginState::load_failed;
    s.error = std::string("the plugin comes from another build (") +
              (api->build ? api->build : "?") + ", this program is " + kCudaPluginBuild + ")";
  } else {
    s.state = CudaPluginState::loaded;
    s.error.clear();
    g_api = api;
  }
}

// Asks the NVIDIA driver (libcuda.so.1, or $RADIXCHAT_CUDA_DRIVER) whether
// any device exists, through the driver API only: the driver is small, while
// the plugin pulls in cuBLAS, which costs far more memory than a CPU-only
// desktop should pay. True when a device answers; otherwise *detail says why.
bool driver_has_device(std::string* detail) {
  const char* env = std::getenv("RADIXCHAT_CUDA_DRIVER");
  const std::string lib = env && *env ? env : "libcuda.so.1";
  void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    *detail = "no NVIDIA driver (" + dl_error("cannot open " + lib) + ")";
    return false;
  }
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using ErrorName = int (*)(int, const char**);
  auto init = reinterpret_cast<Init>(dlsym(handle, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(handle, "cuDeviceGetCount"));
  auto error_name = reinterpret_cast<ErrorName>(dlsym(handle, "cuGetErrorName"));
  auto explain = [&](const char* call, int rc) {
    const char* name = nullptr;
    if (!error_name || error_name(rc, &name) != 0 || !name) name = "unknown error";
    return lib + ": " + call + " returned " + name + " (" + std::to_string(rc) + ")";
  };
  bool found = false;
  int devices = 0;
  if (!init || !count) {
    *detail = lib + " is not an NVIDIA driver (no cuInit or cuDeviceGetCount)";
  } else if (const int rc = init(0); rc != 0) {
    *detail = explain("cuInit", rc);
  } else if (const int rc2 = count(&devices); rc2 != 0) {
    *detail = explain("cuDeviceGetCount", rc2);
  } else if (devices <= 0) {
    *detail = lib + " reports no CUDA device";
  } else {
    found = true;
  }
  // The plugin's runtime opens the driver again when a device exists.
  if (!found) dlclose(handle);
  return found;
}

CudaPluginStatus load() {
  CudaPluginStatus s;
  const char* env = std::getenv("RADIXCHAT_CUDA_PLUGIN");
  if (env && std::strcmp(env, "none") == 0) {
    s.state = CudaPluginState::disabled;
    s.error = "disabled by RADIXCHAT_CUDA_PLUGIN=none";
    return s;
  }
  std::vector<fs::path> paths;
  if (env && *env) {
    paths.push_back(env);
  } else if (RADIXCHAT_CUDA_BUILT) {
    paths = candidates();
  } else {
    s.error = "this build has no CUDA backend";
    return s;
  }
  for (const fs::path& p : paths) {
    s.searched.push_back(p.string());
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      if (!driver_has_device(&s.error)) {
        s.state = CudaPluginState::no_device;
        s.path = p.string();
        return s;
      }
      open_plugin(p, s);
      return s;
    }
  }
  s.state = CudaPluginState::not_found;
  s.error = "the CUDA plugin is not installed";
  return s;
}

}  // namespace

const CudaPluginStatus& cuda_plugin_status() {
  static std::once_flag once;
  static CudaPluginStatus status;
  std::call_once(once, [] { status = load(); });
  return status;
}

std::string describe(const CudaPluginStatus& s) {
  std::string looked;
  for (const std::string& p : s.searched) looked += (looked.empty() ? "" : ", ") + p;
  switch (s.state) {
    case CudaPluginState::loaded:
      return "loaded from " + s.path;
    case CudaPluginState::not_built:
      return "not built (this build has no CUDA backend)";
    case CudaPluginState::disabled:
      return s.error;
    case CudaPluginState::not_found:
      return "not installed (looked for " + looked + ")";
    case CudaPluginState::load_failed:
      return s.path + " did not load: " + s.error;
    case CudaPluginState::no_device:
      return "not loaded, no NVIDIA GPU found: " + s.error;
  }
  return s.error;
}

CudaDeviceAnswer query_cuda_device() {
  const CudaPluginStatus& s = cuda_plugin_status();
  if (s.state == CudaPluginState::no_device) return {false, {}, kNoGpuMessage};
  if (s.state != CudaPluginState::loaded) return {false, {}, "CUDA plugin " + describe(s)};
  return g_api->query_device();
}

std::unique_ptr<Backend> make_cuda_backend(std::string* error) {
  const CudaPluginStatus& s = cuda_plugin_status();
  if (s.state != CudaPluginState::loaded) {
    if (error) *error = "CUDA plugin " + describe(s);
    return nullptr;
  }
  return g_api->make_backend(error);
}

}  // namespace rc::kernels
