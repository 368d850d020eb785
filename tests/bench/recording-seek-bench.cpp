// Seek time in a recording of about 100,000 cache events: what dragging the
// panel's timeline slider costs per position (Recording::tree_at = nearest
// stored snapshot + forward replay). Prints figures; not a test.
//   recording-seek-bench [events=100000] [positions=400]
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "recording/recorder.h"
#include "recording/recording-reader.h"

using namespace rc;

int main(int argc, char** argv) {
  const uint64_t want = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const int positions = argc > 2 ? std::atoi(argv[2]) : 400;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("rc-seek-" + std::to_string(getpid()) + ".db"))
          .string();
  CacheConfig cfg;
  cfg.total_pages = 20000;  // small enough that eviction and merges happen
  auto cache = std::move(make_kv_cache(cfg).value());
  auto rec = recording::Recorder::create(path, {});
  if (!rec.ok()) return std::fprintf(stderr, "%s\n", rec.status().message().c_str()), 1;
  (*rec)->snapshot(cache->snapshot());
  std::mt19937 rng(1);
  uint64_t events = 0;
  while (events < want) {
    // Chat-like prompts: one of 8 system prompts, then a random tail.
    std::vector<Token> p;
    const int sys = int(rng() % 8);
    for (int i = 0; i < 200; ++i) p.push_back(Token(sys * 1000 + i));
    for (int i = 0, n = 20 + int(rng() % 200); i < n; ++i) p.push_back(Token(rng() % 500));
    MatchResult m = cache->match_prefix(p);
    (void)cache->lock(m.node);
    std::vector<PageId> pages = m.pages;
    if (cache->alloc_pages(int64_t(p.size()) - m.tokens, pages).ok()) (void)cache->insert(p, pages);
    (void)cache->unlock(m.node);
    std::vector<CacheEvent> batch;
    cache->events().drain(batch);
    events += batch.size();
    (*rec)->events(std::move(batch));
  }
  if (Status s = (*rec)->close(); !s.ok())
    return std::fprintf(stderr, "%s\n", s.message().c_str()), 1;
  auto r = recording::Recording::open(path);
  if (!r.ok()) return 1;
  const uint64_t end = uint64_t((*r)->summary().last_seq + 1);
  std::vector<double> ms;
  // A drag to the end and back, evenly spaced, as a slider produces.
  for (int i = 0; i < positions; ++i) {
    const double f =
        i < positions / 2 ? double(i) / (positions / 2) : double(positions - i) / (positions / 2);
    const uint64_t seq = std::min<uint64_t>(end, uint64_t(f * double(end)));
    const auto t0 = std::chrono::steady_clock::now();
    auto tree = (*r)->tree_at(seq);
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!tree.ok())
      return std::fprintf(stderr, "seek %llu: %s\n", (unsigned long long)seq,
                          tree.status().message().c_str()),
             1;
  }
  std::sort(ms.begin(), ms.end());
  double loadavg[3] = {0, 0, 0};
  getloadavg(loadavg, 3);
  std::printf("events %llu, snapshots %zu, file %.1f MiB, nodes at end %zu\n",
              (unsigned long long)end, (*r)->snapshots()->size(),
              std::filesystem::file_size(path) / 1048576.0, (*r)->tree_at(end)->nodes.size());
  std::printf("seek over %d positions: median %.2f ms, p90 %.2f ms, max %.2f ms (load %.2f)\n",
              positions, ms[ms.size() / 2], ms[ms.size() * 9 / 10], ms.back(), loadavg[0]);
  std::filesystem::remove(path);
  return 0;
}
