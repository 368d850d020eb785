#!/bin/sh
# Train the sentencepiece BPE tokenizer (Llama-style settings, no dummy prefix).
set -e
cd "$(dirname "$0")"
spm_train --input=work/spm_text.txt --model_prefix=work/tokenizer \
  --model_type=bpe --vocab_size=4096 --character_coverage=1.0 --byte_fallback=true \
  --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=-1 \
  --user_defined_symbols='<|system|>,<|user|>,<|assistant|>,<|end|>' \
  --normalization_rule_name=identity --remove_extra_whitespaces=false \
  --add_dummy_prefix=false --split_digits=true --allow_whitespace_only_pieces=true \
  --max_sentence_length=8192 --input_sentence_size=2000000 --shuffle_input_sentence=true \
  --seed_sentencepiece_size=1000000 --num_threads=2 --minloglevel=1
cp work/tokenizer.model tokenizer.model
