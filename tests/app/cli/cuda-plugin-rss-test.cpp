// A machine without an NVIDIA GPU pays no memory for the installed CUDA
// plugin: probing the backend with the build tree's plugin and this
// machine's own driver stays within 10 MiB of the plugin disabled. Each probe
// runs in a forked child, since a process loads the plugin once.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "radixchat/backend-probe.h"

namespace {

struct Probe {
  long rss_kib = -1;
  std::string plugin;
};

long vm_rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Runs probe_backend(automatic) in a child with `plugin` / `driver` set (empty:
// unset); the child's resident size after the probe and its plugin line.
Probe probe_in_child(const char* plugin, const char* driver) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (*plugin)
      setenv("RADIXCHAT_CUDA_PLUGIN", plugin, 1);
    else
      unsetenv("RADIXCHAT_CUDA_PLUGIN");
    if (*driver)
      setenv("RADIXCHAT_CUDA_DRIVER", driver, 1);
    else
      unsetenv("RADIXCHAT_CUDA_DRIVER");
    const rc::BackendProbe p = rc::probe_backend(rc::BackendSetting::automatic);
    const std::string out = std::to_string(vm_rss_kib()) + "\n" + p.cuda_plugin;
    const ssize_t n = write(fds[1], out.data(), out.size());
    _exit(n == static_cast<ssize_t>(out.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Probe p;
  const size_t nl = got.find('\n');
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || nl == std::string::npos) return p;
  p.rss_kib = std::stol(got.substr(0, nl));
  p.plugin = got.substr(nl + 1);
  return p;
}

TEST(CudaPluginRss, NoGpuCostsNoMemory) {
  const Probe off = probe_in_child("none", "");
  const Probe on = probe_in_child("", "");
  ASSERT_GT(off.rss_kib, 0);
  ASSERT_GT(on.rss_kib, 0);
  std::printf("VmRSS after the probe: %ld KiB with the plugin enabled, %ld KiB disabled\n",
              on.rss_kib, off.rss_kib);
  if (on.plugin.rfind("loaded from", 0) == 0) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(on.plugin.rfind("not loaded, no NVIDIA GPU found", 0), 0u) << on.plugin;
  EXPECT_LE(on.rss_kib - off.rss_kib, 10 * 1024)
      << "plugin enabled: " << on.rss_kib << " KiB, disabled: " << off.rss_kib << " KiB";
}

// The control: when the driver says a device exists, the plugin (and its
// cuBLAS) is loaded, and that costs more than the 10 MiB allowed above, so
// the measurement can tell the two apart.
TEST(CudaPluginRss, LoadingThePluginIsMeasurable) {
  const Probe off = probe_in_child("none", "");
  const Probe loaded = probe_in_child("", FAKE_DRIVER_ONE);
  ASSERT_GT(off.rss_kib, 0);
  ASSERT_EQ(loaded.plugin.rfind("loaded from", 0), 0u) << loaded.plugin;
  std::printf("VmRSS after the probe: %ld KiB with the plugin loaded, %ld KiB disabled\n",
              loaded.rss_kib, off.rss_kib);
  EXPECT_GT(loaded.rss_kib - off.rss_kib, 10 * 1024)
      << "plugin loaded: " << loaded.rss_kib << " KiB, disabled: " << off.rss_kib << " KiB";
}

}  // namespace
