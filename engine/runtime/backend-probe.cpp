// probe_backend: the kernels' device choice and plugin status, as plain
// strings for programs above the engine (contract in radixchat/backend-probe.h).
#include "radixchat/backend-probe.h"

#include "cuda-plugin.h"
#include "device-select.h"
#include "engine-setup.h"

namespace rc {

BackendProbe probe_backend(BackendSetting requested) {
  const kernels::DeviceChoice d = kernels::select_device(runtime::device_request(requested));
  BackendProbe p;
  p.backend = d.kind == kernels::DeviceKind::cuda ? "cuda" : "cpu";
  p.device = d.name;
  p.reason = d.reason;
  p.cuda_built = kernels::cuda_compiled_in();
  p.cuda_plugin = kernels::describe(kernels::cuda_plugin_status());
  return p;
}

}  // namespace rc
