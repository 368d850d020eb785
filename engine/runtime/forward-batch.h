// One step of work for the model runner: the new tokens of one or more
// sequences, each continuing from the positions it already has in the KV
// pool. Built by the scheduler on the engine thread; consumed by ModelRunner.
#pragma once

#include <cstdint>
#include <vector>

namespace rc::runtime {

struct BatchSequence {
  // Pages holding positions [0, n_past + n_new): the cached prefix, earlier
  // chunks and this chunk. Host memory, owned by the caller for the step.
  const std::vector<int32_t>* page_table = nullptr;
  int n_past = 0;       // positions already in the pool
  int first_token = 0;  // index of this sequence's first token in ForwardBatch::tokens
  int n_new = 0;        // tokens of this step
  // Logits of the last n_logits new positions (0: none; 1: the next token;
  // more: a drafted continuation being verified, one row per position).
  int n_logits = 0;
};

struct ForwardBatch {
  std::vector<int32_t> tokens;  // all sequences' new tokens, back to back
  std::vector<BatchSequence> seqs;

  int n_tokens() const { return static_cast<int>(tokens.size()); }
  int n_logit_rows() const {
    int n = 0;
    for (const BatchSequence& s : seqs) n += s.n_logits;
    return n;
  }
  // Appends a sequence's chunk with logits of its last n_logits positions
  // (at most n_new; a bool asks for the last one); returns its index in seqs.
  int add(const std::vector<int32_t>& page_table, int n_past, const int32_t* new_tokens, int n_new,
          int n_logits) {
    seqs.push_back({&page_table, n_past, n_tokens(), n_new, n_logits});
    tokens.insert(tokens.end(), new_tokens, new_tokens + n_new);
    return static_cast<int>(seqs.size()) - 1;
  }
  void clear() {
    tokens.clear();
    seqs.clear();
  }
};

}  // namespace rc::runtime
