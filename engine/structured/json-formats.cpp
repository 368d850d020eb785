// String formats as small byte automata. A state packs a stage, a position
// within it and what later bytes depend on (a date's month and leap year,
// an hour's first digit, an email label's length), so every generated
// string is a real date, time, UUID or address, not just the right shape.
#include "json-closing.h"
#include "json-matcher.h"

namespace rc::structured {

namespace {

// state = stage | idx << 4 | data << 12
struct Fmt {
  uint32_t stage, idx, data;
  static Fmt of(uint32_t s) { return {s & 0xf, (s >> 4) & 0xff, s >> 12}; }
  int64_t pack() const { return int64_t(stage | idx << 4 | data << 12); }
};

bool digit(uint8_t c) { return c >= '0' && c <= '9'; }
bool hex(uint8_t c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool alnum(uint8_t c) { return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

int days_in(uint32_t month, bool leap) {
  static const int kDays[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap ? 29 : kDays[month];
}

// Stages shared by date, time and date-time.
enum : uint32_t { kDate, kT, kTime, kTimeEnd, kFrac, kOffset, kDone };

// "YYYY-MM-DD". data: year mod 400 (bits 0-8), month (9-12), day tens (13-14).
int64_t date_next(Fmt s, uint8_t c, uint32_t after) {
  const uint32_t y400 = s.data & 0x1ff, month = (s.data >> 9) & 0xf, tens = (s.data >> 13) & 3;
  const uint32_t d = c - '0';
  auto next = [&](uint32_t data) { return Fmt{s.stage, s.idx + 1, data}.pack(); };
  switch (s.idx) {
    case 0:
    case 1:
    case 2:
    case 3:
      return digit(c) ? next((y400 * 10 + d) % 400) : -1;
    case 4:
    case 7:
      return c == '-' ? next(s.data) : -1;
    case 5:
      return digit(c) && d <= 1 ? next(y400 | (d * 10) << 9) : -1;
    case 6: {
      if (!digit(c)) return -1;
      const uint32_t m = month + d;
      return m >= 1 && m <= 12 ? next(y400 | m << 9) : -1;
    }
    case 8: {
      const bool leap = (y400 % 4 == 0 && y400 % 100 != 0) || y400 == 0;
      const int max = days_in(month, leap);
      return digit(c) && int(d) <= max / 10 ? next(s.data | d << 13) : -1;
    }
    case 9: {
      const bool leap = (y400 % 4 == 0 && y400 % 100 != 0) || y400 == 0;
      const int day = int(tens * 10 + d);
      if (!digit(c) || day < 1 || day > days_in(month, leap)) return -1;
      return Fmt{after, 0, 0}.pack();
    }
  }
  return -1;
}

// "HH:MM" (idx 0-4) and ":SS" (idx 5-7). data: the hour's first digit.
int64_t clock_next(Fmt s, uint8_t c, uint32_t last_idx, uint32_t after) {
  const uint32_t d = c - '0';
  bool ok = false;
  switch (s.idx) {
    case 0:
      ok = digit(c) && d <= 2;
      break;
    case 1:
      ok = digit(c) && (s.data < 2 || d <= 3);
      break;
    case 2:
    case 5:
      ok = c == ':';
      break;
    case 3:
    case 6:
      ok = digit(c) && d <= 5;
      break;
    case 4:
    case 7:
      ok = digit(c);
      break;
  }
  if (!ok) return -1;
  if (s.idx == last_idx) return Fmt{after, 0, 0}.pack();
  return Fmt{s.stage, s.idx + 1, s.idx == 0 ? d : s.data}.pack();
}

int64_t time_next(Fmt s, uint8_t c) {
  switch (s.stage) {
    case kT:
      return c == 'T' ? Fmt{kTime, 0, 0}.pack() : -1;
    case kTime:
      return clock_next(s, c, 7, kTimeEnd);
    case kTimeEnd:
    case kFrac:
      if (s.stage == kTimeEnd && c == '.') return Fmt{kFrac, 0, 0}.pack();
      if (s.stage == kFrac && digit(c) && s.idx < 9) return Fmt{kFrac, s.idx + 1, 0}.pack();
      if (s.stage == kFrac && s.idx == 0) return -1;
      if (c == 'Z') return Fmt{kDone, 0, 0}.pack();
      if (c == '+' || c == '-') return Fmt{kOffset, 0, 0}.pack();
      return -1;
    case kOffset:
      return clock_next(s, c, 4, kDone);
  }
  return -1;
}

// local@label.label...: local is dot-separated runs of [A-Za-z0-9_%+-]
// (at most 64 bytes); labels are [A-Za-z0-9-], 1-63 bytes, not starting or
// ending with '-'; at least two labels, at most 253 bytes. data: bit 0 last byte was '.' or
// '-', bit 1 the domain has a dot; idx counts the local part / the label.
int64_t email_step(Fmt s, uint8_t c) {
  const bool special = s.data & 1, dotted = s.data & 2;
  if (s.stage == 0) {  // local part
    if (c == '@') return s.idx > 0 && !special ? Fmt{1, 0, 0}.pack() : -1;
    if (s.idx >= 64) return -1;
    if (c == '.') return s.idx > 0 && s.idx < 63 && !special ? Fmt{0, s.idx + 1, 1}.pack() : -1;
    const bool ok = alnum(c) || c == '_' || c == '%' || c == '+' || c == '-';
    return ok ? Fmt{0, s.idx + 1, 0}.pack() : -1;
  }
  // The domain: data bits 2 and up count its bytes (at most 253).
  const uint32_t len = s.data >> 2;
  if (len >= 253) return -1;
  const uint32_t keep = (len + 1) << 2 | (dotted ? 2u : 0u);
  if (c == '.') return s.idx > 0 && !special ? Fmt{1, 0, keep | 2}.pack() : -1;
  if (s.idx >= 63) return -1;
  if (c == '-') return s.idx > 0 && s.idx < 62 ? Fmt{1, s.idx + 1, keep | 1}.pack() : -1;
  return alnum(c) ? Fmt{1, s.idx + 1, keep}.pack() : -1;
}

// A domain byte is taken only while the shortest ending still fits in 253
// bytes, so no address is left without a way to end.
int64_t email_next(Fmt s, uint8_t c) {
  const int64_t next = email_step(s, c);
  if (next < 0 || Fmt::of(uint32_t(next)).stage == 0) return next;
  const uint32_t len = Fmt::of(uint32_t(next)).data >> 2;
  return len + format_min_remaining(StringFormat::email, uint32_t(next)) <= 253 ? next : -1;
}

// Dotted quad, each part 0-255 without leading zeros. stage: the part;
// idx: its digits; data: its value.
int64_t ipv4_next(Fmt s, uint8_t c) {
  if (c == '.') return s.idx > 0 && s.stage < 3 ? Fmt{s.stage + 1, 0, 0}.pack() : -1;
  if (!digit(c) || s.idx >= 3 || (s.idx > 0 && s.data == 0)) return -1;
  const uint32_t v = s.data * 10 + (c - '0');
  return v <= 255 ? Fmt{s.stage, s.idx + 1, v}.pack() : -1;
}

}  // namespace

int64_t format_next(StringFormat f, uint32_t state, uint8_t c) {
  const Fmt s = Fmt::of(state);
  switch (f) {
    case StringFormat::none:
      return -1;
    case StringFormat::date:
      return s.stage == kDate ? date_next(s, c, kDone) : -1;
    case StringFormat::date_time:
      return s.stage == kDate ? date_next(s, c, kT) : time_next(s, c);
    case StringFormat::time:
      return time_next(s.stage == kDate ? Fmt{kTime, 0, 0} : s, c);
    case StringFormat::uuid: {
      const bool dash = s.idx == 8 || s.idx == 13 || s.idx == 18 || s.idx == 23;
      if (s.idx >= 36 || (dash ? c != '-' : !hex(c))) return -1;
      return Fmt{0, s.idx + 1, 0}.pack();
    }
    case StringFormat::email:
      return email_next(s, c);
    case StringFormat::ipv4:
      return ipv4_next(s, c);
  }
  return -1;
}

bool format_complete(StringFormat f, uint32_t state) {
  const Fmt s = Fmt::of(state);
  switch (f) {
    case StringFormat::none:
      return true;
    case StringFormat::date:
    case StringFormat::date_time:
    case StringFormat::time:
      return s.stage == kDone;
    case StringFormat::uuid:
      return s.idx == 36;
    case StringFormat::email:
      return s.stage == 1 && s.idx > 0 && !(s.data & 1) && (s.data & 2);
    case StringFormat::ipv4:
      return s.stage == 3 && s.idx > 0;
  }
  return false;
}

uint32_t format_min_remaining(StringFormat f, uint32_t state) {
  const Fmt s = Fmt::of(state);
  // What follows a date-time's date, stage by stage: "T", "HH:MM:SS", "Z".
  auto clock = [&]() -> uint32_t {
    switch (s.stage) {
      case kT:
        return 10;
      case kTime:
        return 8 - s.idx + 1;
      case kTimeEnd:
        return 1;
      case kFrac:
        return s.idx == 0 ? 2 : 1;
      case kOffset:
        return 5 - s.idx;
    }
    return 0;
  };
  switch (f) {
    case StringFormat::none:
      return 0;
    case StringFormat::date:
      return s.stage == kDate ? 10 - s.idx : 0;
    case StringFormat::date_time:
      return s.stage == kDate ? 10 - s.idx + 10 : clock();
    case StringFormat::time:
      return s.stage == kDate ? 9 : clock();
    case StringFormat::uuid:
      return 36 - s.idx;
    case StringFormat::email: {
      const bool special = s.data & 1, dotted = s.data & 2;
      if (s.stage == 0) return s.idx == 0 || special ? 5 : 4;
      if (s.idx == 0 || special) return dotted ? 1 : 3;
      return dotted ? 0 : 2;
    }
    case StringFormat::ipv4:
      return (s.idx == 0 ? 1 : 0) + 2 * (3 - s.stage);
  }
  return 0;
}

uint32_t format_max_remaining(StringFormat f) {
  switch (f) {
    case StringFormat::none:
      return 0;
    case StringFormat::date:
      return 10;
    case StringFormat::date_time:
      return 20;
    case StringFormat::time:
      return 9;
    case StringFormat::uuid:
      return 36;
    case StringFormat::email:
      return 5;
    case StringFormat::ipv4:
      return 7;
  }
  return 0;
}

}  // namespace rc::structured
