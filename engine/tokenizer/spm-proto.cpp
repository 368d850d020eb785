#include "spm-proto.h"

#include <cstring>

namespace rc::tok {

namespace {

enum Wire : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void put_tag(std::string& out, uint32_t field, Wire w) {
  put_varint(out, (uint64_t(field) << 3) | w);
}
// int32 fields are sign-extended to 64 bits on the wire (so -1 takes 10 bytes).
void put_int32(std::string& out, uint32_t field, int32_t v) {
  put_tag(out, field, kVarint);
  put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(v)));
}
void put_bool(std::string& out, uint32_t field, bool v) {
  put_tag(out, field, kVarint);
  put_varint(out, v ? 1 : 0);
}
void put_bytes(std::string& out, uint32_t field, std::string_view s) {
  put_tag(out, field, kLen);
  put_varint(out, s.size());
  out.append(s);
}
void put_float(std::string& out, uint32_t field, float f) {
  put_tag(out, field, kFixed32);
  char b[4];
  std::memcpy(b, &f, 4);
  out.append(b, 4);
}

// Sequential reader of one message's fields.
struct Reader {
  std::string_view s;
  size_t pos = 0;
  bool bad = false;

  bool done() const { return pos >= s.size() || bad; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= s.size()) break;
      const uint8_t b = static_cast<uint8_t>(s[pos++]);
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    bad = true;
    return 0;
  }
  std::string_view bytes() {
    const uint64_t n = varint();
    if (bad || n > s.size() - pos) {
      bad = true;
      return {};
    }
    std::string_view out = s.substr(pos, n);
    pos += n;
    return out;
  }
  uint32_t fixed32() {
    if (s.size() - pos < 4) {
      bad = true;
      return 0;
    }
    uint32_t v;
    std::memcpy(&v, s.data() + pos, 4);
    pos += 4;
    return v;
  }
  void skip(uint32_t wire) {
    switch (wire) {
      case kVarint:
        varint();
        break;
      case kFixed64:
        if (s.size() - pos < 8)
          bad = true;
        else
          pos += 8;
        break;
      case kLen:
        bytes();
        break;
      case kFixed32:
        fixed32();
        break;
      default:
        bad = true;
    }
  }
};

Status corrupt(const char* what) {
  return Status(StatusCode::corrupt_data, std::string("malformed sentencepiece model: ") + what);
}

}  // namespace

std::string serialize_spm_model(const SpmModel& m) {
  std::string out;
  out.reserve(m.pieces.size() * 16 + 256);
  std::string msg;
  for (const SpmPiece& p : m.pieces) {
    msg.clear();
    put_bytes(msg, 1, p.piece);
    put_float(msg, 2, p.score);
    put_int32(msg, 3, static_cast<int32_t>(p.type));
    put_bytes(out, 1, msg);
  }
  msg.clear();
  put_int32(msg, 3, m.model_type);
  put_int32(msg, 4, m.vocab_size);
  put_bool(msg, 24, m.treat_whitespace_as_suffix);
  put_bool(msg, 35, m.byte_fallback);
  put_int32(msg, 40, m.unk_id);
  put_int32(msg, 41, m.bos_id);
  put_int32(msg, 42, m.eos_id);
  put_int32(msg, 43, m.pad_id);
  put_bytes(out, 2, msg);
  msg.clear();
  put_bytes(msg, 1, m.normalizer_name);
  if (!m.precompiled_charsmap.empty()) put_bytes(msg, 2, m.precompiled_charsmap);
  put_bool(msg, 3, m.add_dummy_prefix);
  put_bool(msg, 4, m.remove_extra_whitespaces);
  put_bool(msg, 5, m.escape_whitespaces);
  put_bytes(out, 3, msg);
  return out;
}

Result<SpmModel> parse_spm_model(std::string_view bytes) {
  SpmModel m;
  Reader r{bytes};
  while (!r.done()) {
    const uint64_t tag = r.varint();
    const uint32_t field = static_cast<uint32_t>(tag >> 3), wire = tag & 7;
    if (r.bad) break;
    if (wire != kLen || field < 1 || field > 3) {
      r.skip(wire);
      continue;
    }
    Reader sub{r.bytes()};
    if (r.bad) break;
    if (field == 1) {
      SpmPiece p;
      while (!sub.done()) {
        const uint64_t t = sub.varint();
        const uint32_t f = static_cast<uint32_t>(t >> 3), w = t & 7;
        if (f == 1 && w == kLen)
          p.piece = std::string(sub.bytes());
        else if (f == 2 && w == kFixed32) {
          const uint32_t v = sub.fixed32();
          std::memcpy(&p.score, &v, 4);
        } else if (f == 3 && w == kVarint)
          p.type = static_cast<PieceType>(int32_t(sub.varint()));
        else
          sub.skip(w);
      }
      if (sub.bad) return corrupt("bad piece");
      m.pieces.push_back(std::move(p));
    } else if (field == 2) {
      while (!sub.done()) {
        const uint64_t t = sub.varint();
        const uint32_t f = static_cast<uint32_t>(t >> 3), w = t & 7;
        if (w != kVarint) {
          sub.skip(w);
          continue;
        }
        const int32_t v = static_cast<int32_t>(sub.varint());
        switch (f) {
          case 3:
            m.model_type = v;
            break;
          case 4:
            m.vocab_size = v;
            break;
          case 24:
            m.treat_whitespace_as_suffix = v != 0;
            break;
          case 35:
            m.byte_fallback = v != 0;
            break;
          case 40:
            m.unk_id = v;
            break;
          case 41:
            m.bos_id = v;
            break;
          case 42:
            m.eos_id = v;
            break;
          case 43:
            m.pad_id = v;
            break;
          default:
            break;
        }
      }
      if (sub.bad) return corrupt("bad trainer_spec");
    } else {
      while (!sub.done()) {
        const uint64_t t = sub.varint();
        const uint32_t f = static_cast<uint32_t>(t >> 3), w = t & 7;
        if (f == 1 && w == kLen)
          m.normalizer_name = std::string(sub.bytes());
        else if (f == 2 && w == kLen)
          m.precompiled_charsmap = std::string(sub.bytes());
        else if (f >= 3 && f <= 5 && w == kVarint) {
          const bool v = sub.varint() != 0;
          (f == 3   ? m.add_dummy_prefix
           : f == 4 ? m.remove_extra_whitespaces
                    : m.escape_whitespaces) = v;
        } else
          sub.skip(w);
      }
      if (sub.bad) return corrupt("bad normalizer_spec");
    }
  }
  if (r.bad) return corrupt("truncated or invalid wire data");
  return m;
}

}  // namespace rc::tok
