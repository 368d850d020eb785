// splitmix64 and a name hash: a tiny, portable, seedable generator for the
// test model writers (std distributions differ between standard libraries, and the
// files must be identical everywhere).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

namespace rc::testing {

struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  float normal() {                                                          // Box-Muller
    const double u1 = uniform() + 1e-300, u2 = uniform();
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2));
  }
};

// A stream seed per (seed, name): FNV-1a over the name.
inline uint64_t name_hash(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace rc::testing
