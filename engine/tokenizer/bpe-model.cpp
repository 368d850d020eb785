#include "bpe-model.h"

#include <algorithm>
#include <cstdio>

#include "utf8.h"

namespace rc::tok {

namespace {

struct ByteTable {
  std::array<std::string, 256> chars;
  std::array<int16_t, 0x144> back;  // code point -> byte, -1 where none
  ByteTable() {
    back.fill(-1);
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      const uint32_t cp = printable ? b : 256 + extra++;
      chars[b] = cp < 0x80 ? std::string(1, static_cast<char>(cp))
                           : std::string{static_cast<char>(0xC0 | (cp >> 6)),
                                         static_cast<char>(0x80 | (cp & 0x3F))};
      back[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteTable& table() {
  static const ByteTable t;
  return t;
}

// A vocabulary entry or merge for an error message: quoted, cut when long.
std::string quote(std::string_view s) {
  constexpr size_t kMax = 48;
  std::string q(1, '\'');
  q.append(s.substr(0, kMax));
  q.append(s.size() > kMax ? "...'" : "'");
  return q;
}

Status corrupt(std::string msg) { return Status(StatusCode::corrupt_data, std::move(msg)); }

}  // namespace

const std::string& bpe_byte_char(uint8_t b) { return table().chars[b]; }

std::string bpe_entry_bytes(std::string_view entry) {
  std::string out;
  out.reserve(entry.size());
  for (size_t i = 0; i < entry.size();) {
    const int n = utf8_sequence_length(entry.substr(i));
    if (n <= 0) {  // not UTF-8: keep the byte
      out += entry[i++];
      continue;
    }
    uint32_t cp = static_cast<unsigned char>(entry[i]);
    if (n == 2) cp = ((cp & 0x1F) << 6) | (static_cast<unsigned char>(entry[i + 1]) & 0x3F);
    const int16_t b = n <= 2 && cp < table().back.size() ? table().back[cp] : int16_t(-1);
    if (b >= 0)
      out += static_cast<char>(b);
    else
      out.append(entry.substr(i, static_cast<size_t>(n)));
    i += static_cast<size_t>(n);
  }
  return out;
}

Result<std::unique_ptr<BpeModel>> BpeModel::create(const std::vector<SpmPiece>& pieces,
                                                   const std::vector<std::string_view>& merges,
                                                   std::string_view pre) {
  Result<std::unique_ptr<PreTokenizer>> p = PreTokenizer::create(pre);
  if (!p.ok()) return p.status();
  std::unique_ptr<BpeModel> m(new BpeModel());
  m->pre_ = std::move(p).value();
  m->ids_.reserve(pieces.size());
  for (size_t id = 0; id < pieces.size(); ++id) {
    const PieceType t = pieces[id].type;
    // Control and unknown entries are never text (encode() splits them out).
    if (t == PieceType::control || t == PieceType::unknown) continue;
    m->ids_.emplace(pieces[id].piece, static_cast<int32_t>(id));  // first entry wins
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = m->ids_.find(bpe_byte_char(static_cast<uint8_t>(b)));
    if (it == m->ids_.end()) {
      char msg[128];
      std::snprintf(msg, sizeof msg,
                    "the byte-level BPE vocabulary has no entry for byte 0x%02x ('%s')", b,
                    bpe_byte_char(static_cast<uint8_t>(b)).c_str());
      return corrupt(msg);
    }
    m->byte_ids_[b] = it->second;
  }
  m->merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string_view s = merges[i];
    const std::string where = "tokenizer.ggml.merges[" + std::to_string(i) + "] " + quote(s);
    const size_t sp = s.size() > 1 ? s.find(' ', 1) : std::string_view::npos;
    if (sp == std::string_view::npos || sp + 1 >= s.size()) {
      return corrupt(where + " is not two vocabulary entries separated by a space");
    }
    const std::string left(s.substr(0, sp)), right(s.substr(sp + 1));
    const auto l = m->ids_.find(left), r = m->ids_.find(right);
    if (l == m->ids_.end() || r == m->ids_.end()) {
      return corrupt(where + ": " + quote(l == m->ids_.end() ? left : right) +
                     " is not in the vocabulary");
    }
    const auto res = m->ids_.find(left + right);
    if (res == m->ids_.end()) {
      return corrupt(where + " makes " + quote(left + right) + ", which is not in the vocabulary");
    }
    m->merges_.emplace(pair_key(l->second, r->second),
                       Merge{static_cast<int32_t>(i), res->second});  // lowest rank wins
  }
  return m;
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (pre_->ignore_merges() && word.size() > 1) {
    std::string mapped;
    for (char c : word) mapped += bpe_byte_char(static_cast<uint8_t>(c));
    if (const auto it = ids_.find(mapped); it != ids_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  // Symbols in a linked list over the word's bytes; merged-away ones get id -1.
  struct Sym {
    int32_t id, prev, next;
  };
  // A candidate merge of symbols l and r, valid while both still hold the
  // ids they had when it was queued and are still neighbours.
  struct Cand {
    int32_t rank, l, r, lid, rid, result;
  };
  thread_local std::vector<Sym> syms;
  thread_local std::vector<Cand> heap;
  const int32_t n = static_cast<int32_t>(word.size());
  syms.resize(static_cast<size_t>(n));
  heap.clear();
  const auto later = [](const Cand& a, const Cand& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.l > b.l);
  };
  const auto queue = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const auto it = merges_.find(pair_key(syms[l].id, syms[r].id));
    if (it == merges_.end()) return;
    heap.push_back({it->second.rank, l, r, syms[l].id, syms[r].id, it->second.result});
    std::push_heap(heap.begin(), heap.end(), later);
  };
  for (int32_t i = 0; i < n; ++i) {
    syms[i] = {byte_ids_[static_cast<uint8_t>(word[i])], i - 1, i + 1 < n ? i + 1 : -1};
  }
  for (int32_t i = 0; i + 1 < n; ++i) queue(i, i + 1);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Cand c = heap.back();
    heap.pop_back();
    Sym& l = syms[c.l];
    if (l.id != c.lid || l.next != c.r || syms[c.r].id != c.rid) continue;  // stale
    l.id = c.result;
    l.next = syms[c.r].next;
    if (l.next >= 0) syms[l.next].prev = c.l;
    syms[c.r].id = -1;
    queue(l.prev, c.l);
    queue(c.l, l.next);
  }
  for (int32_t i = 0; i >= 0; i = syms[i].next) out.push_back(syms[i].id);
}

Status BpeModel::encode(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<std::string_view> words;
  if (Status st = pre_->split(text, words); !st.ok()) return st;
  for (std::string_view w : words) {
    if (!w.empty()) encode_word(w, out);
  }
  return {};
}

}  // namespace rc::tok
