#include "format-runs.h"

#include <algorithm>
#include <vector>

#include "json-closing.h"
#include "json-matcher.h"

namespace rc::structured {

namespace {

bool digit(uint8_t c) { return c >= '0' && c <= '9'; }
bool alnum(uint8_t c) { return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The bytes of each class, listed once.
struct ClassTable {
  bool member[kByteClasses][256] = {};
  std::vector<uint8_t> bytes[kByteClasses];
  ClassTable() {
    for (int c = 0; c < 256; ++c) {
      const uint8_t b = static_cast<uint8_t>(c);
      const bool hex = digit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
      member[0][c] = digit(b);  // dates, times
      member[1][c] = hex;       // UUIDs
      member[2][c] = alnum(b);  // email domain labels
      member[3][c] = alnum(b) || b == '_' || b == '%' || b == '+' || b == '-';  // email local part
      member[kWritableClass][c] = b >= 0x20 && b < 0x7f && b != '"' && b != '\\';
      member[5][c] = b >= 'a' && b <= 'z';
      member[6][c] = alnum(b) && !digit(b);
      member[7][c] = alnum(b) || b == '_';
      for (int k = 0; k < kByteClasses; ++k) {
        if (member[k][c]) bytes[k].push_back(b);
      }
    }
  }
};

const ClassTable& classes() {
  static const ClassTable table;
  return table;
}

// The one state every byte of class k leads to from `state`; -1 when some
// byte is refused or two bytes lead to different states.
int64_t uniform_next(StringFormat f, uint32_t state, int k) {
  int64_t next = -1;
  for (uint8_t c : classes().bytes[k]) {
    const int64_t s = format_next(f, state, c);
    if (s < 0 || (next >= 0 && s != next)) return -1;
    next = s;
  }
  return next;
}

uint64_t key_of(StringFormat f, uint32_t state, int k) {
  return uint64_t(state) | uint64_t(k) << 32 | uint64_t(f) << 40;
}

}  // namespace

bool in_byte_class(int k, uint8_t c) { return classes().member[k][c]; }

const FormatRuns::Entry* FormatRuns::find(uint64_t key) const {
  if (memo_.empty()) return nullptr;
  const Entry& e = memo_[slot(key)];
  return e.key == key ? &e : nullptr;
}

void FormatRuns::store(uint64_t key, int run, uint32_t worst) {
  if (memo_.empty()) memo_.resize(size_t{1} << kSlotBits);
  memo_[slot(key)] = Entry{key, run, worst};
}

int FormatRuns::run_length(StringFormat f, uint32_t state, int k, uint32_t* worst) {
  if (const Entry* e = find(key_of(f, state, k))) {
    if (worst) *worst = e->worst;
    return e->run;
  }
  // R(s) = 0 when the class is not uniform from s, else 1 + R(next). Follow
  // the chain until it ends, meets a known state, or reaches the cap (then
  // the last state is credited one step: an undercount only costs speed).
  // W(s), the most still needed after the run's bytes: 0 without a run,
  // else the larger of what `next` needs and W(next).
  std::vector<uint32_t> chain = {state};
  int last = 0;             // R of the chain's last state
  uint32_t last_worst = 0;  // W of the chain's last state
  for (;;) {
    const int64_t next = uniform_next(f, chain.back(), k);
    if (next < 0) break;
    const uint32_t n = static_cast<uint32_t>(next);
    const uint32_t need = format_min_remaining(f, n);
    if (const Entry* e = find(key_of(f, n, k))) {
      last = 1 + e->run;
      last_worst = std::max(need, e->worst);
      break;
    }
    if (static_cast<int>(chain.size()) == kMaxRun) {
      last = 1;
      last_worst = need;
      break;
    }
    chain.push_back(n);
  }
  int run = last;
  uint32_t w = last_worst;
  for (size_t i = chain.size(); i-- > 0; ++run) {
    store(key_of(f, chain[i], k), std::min(run, kMaxRun), w);
    if (i > 0) w = std::max(w, format_min_remaining(f, chain[i]));
  }
  if (worst) *worst = w;
  return std::min(last + static_cast<int>(chain.size()) - 1, kMaxRun);
}

}  // namespace rc::structured
