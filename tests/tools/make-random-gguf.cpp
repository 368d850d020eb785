// make-random-gguf: writes a deterministic random-weight GGUF of any
// llama/qwen2/qwen3 shape and weight type (see random-gguf.h), or with
// --copy a llama model of the same shape and types built to copy text from
// its context (copy-gguf.h).
//
//   make-random-gguf --arch llama --dim 2048 --layers 22 --heads 32 --kv-heads 4
//          --ffn 5632 --vocab 32000 --ctx 2048 --type q4_k_m --seed 1 --out tiny.gguf
#include <CLI/CLI.hpp>

#include <cstdio>

#include "random-gguf.h"

int main(int argc, char** argv) {
  rc::testing::RandomModelSpec s;
  std::string out;
  CLI::App app{"Write a deterministic random-weight GGUF model", "make-random-gguf"};
  app.add_option("--arch", s.arch, "llama, qwen2 or qwen3")->capture_default_str();
  app.add_option("--dim", s.dim, "embedding length")->capture_default_str();
  app.add_option("--layers", s.layers, "blocks")->capture_default_str();
  app.add_option("--heads", s.heads, "attention heads")->capture_default_str();
  app.add_option("--kv-heads", s.kv_heads, "KV heads")->capture_default_str();
  app.add_option("--ffn", s.ffn, "feed-forward length")->capture_default_str();
  app.add_option("--head-dim", s.head_dim, "attention.key_length (0: dim / heads)")
      ->capture_default_str();
  app.add_option("--vocab", s.vocab, "vocabulary size (synthetic vocabulary)")
      ->capture_default_str();
  app.add_option("--ctx", s.ctx, "trained context length")->capture_default_str();
  app.add_option("--type", s.type, "f32 f16 bf16 q8_0 q4_0 q5_0 q5_1 q4_k q5_k q6_k q4_k_m q5_k_m")
      ->capture_default_str();
  app.add_option("--seed", s.seed, "random seed")->capture_default_str();
  app.add_option("--rope-base", s.rope_base, "rope.freq_base")->capture_default_str();
  app.add_flag("--tied", s.tied_output, "no output.weight (tied to token_embd)");
  app.add_flag("--llama3-rope", s.llama3_rope, "write rope_freqs.weight (Llama 3.1 scaling)");
  app.add_flag("--llama3-rope-metadata", s.llama3_rope_metadata,
               "write Llama 3.1 scaling as rope.scaling.* metadata instead");
  app.add_flag("--copy", s.copy,
               "built weights whose greedy decoding copies text from the context (an "
               "induction-head circuit; llama, head dim 64)");
  app.add_option("--vocab-from", s.vocab_from, "copy the vocabulary of a GGUF or tokenizer.model");
  app.add_option("--chat-template", s.chat_template, "radixchat llama2 zephyr chatml llama3, or ''")
      ->capture_default_str();
  app.add_option("--out", out, "output file")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "make-random-gguf: %s\n", e.what());
    return 2;
  }
  if (rc::Status st = rc::testing::write_random_model(s, out); !st.ok()) {
    std::fprintf(stderr, "make-random-gguf: %s\n", st.to_string().c_str());
    return 1;
  }
  return 0;
}
