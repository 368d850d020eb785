// Real chat templates. Texts as published in each model's
// tokenizer_config.json (and so in its GGUF's tokenizer.chat_template);
// tool-calling branches are shortened where marked, as they play no part in
// recognition or in plain system/user/assistant rendering. The Qwen3 text is
// from a convert_hf_to_gguf log of a Qwen3 model; the DeepSeek-R1 distill
// text from llama.cpp models/templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja.
#include "chat-template-fixtures.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "model/gguf-writer.h"
#include "random-gguf.h"

namespace rc::testing {

namespace {

const char* kLlama3 =  // meta-llama/Meta-Llama-3-8B-Instruct
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | "
    "trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% "
    "endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

const char* kLlama32 =  // meta-llama/Llama-3.2-1B-Instruct (custom tools branches shortened)
    "{{- bos_token }}\n{%- if custom_tools is defined %}\n    {%- set tools = custom_tools %}\n"
    "{%- endif %}\n{%- if not tools_in_user_message is defined %}\n    {%- set "
    "tools_in_user_message = true %}\n{%- endif %}\n{%- if not date_string is defined %}\n    "
    "{%- if strftime_now is defined %}\n        {%- set date_string = strftime_now(\"%d %b %Y\") "
    "%}\n    {%- else %}\n        {%- set date_string = \"26 Jul 2024\" %}\n    {%- endif "
    "%}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif "
    "%}\n\n{#- This block extracts the system message, so we can slot it into the right place. "
    "#}\n{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = "
    "messages[0]['content']|trim %}\n    {%- set messages = messages[1:] %}\n{%- else %}\n    "
    "{%- set system_message = \"\" %}\n{%- endif %}\n\n{#- System message #}\n{{- "
    "\"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}\n{%- if tools is not none %}\n    "
    "{{- \"Environment: ipython\\n\" }}\n{%- endif %}\n{{- \"Cutting Knowledge Date: December "
    "2023\\n\" }}\n{{- \"Today Date: \" + date_string + \"\\n\\n\" }}\n{{- system_message }}\n{{- "
    "\"<|eot_id|>\" }}\n\n{%- for message in messages %}\n    {%- if not (message.role == "
    "'ipython' or message.role == 'tool' or 'tool_calls' in message) %}\n        {{- "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | "
    "trim + '<|eot_id|>' }}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt "
    "%}\n    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n{%- endif %}\n";

const char* kQwen25 =  // Qwen/Qwen2.5-7B-Instruct (tools branch shortened)
    "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0]['role'] == "
    "'system' %}\n        {{- messages[0]['content'] }}\n    {%- else %}\n        {{- 'You are "
    "Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n    {%- endif %}\n    {{- "
    "\"\\n\\n# Tools\\n\\n...\" }}\n{%- else %}\n    {%- if messages[0]['role'] == 'system' %}\n "
    "       {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n    {%- "
    "else %}\n        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a "
    "helpful assistant.<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n{%- for message in "
    "messages %}\n    {%- if (message.role == \"user\") or (message.role == \"system\" and not "
    "loop.first) or (message.role == \"assistant\" and not message.tool_calls) %}\n        {{- "
    "'<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n    "
    "{%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- "
    "'<|im_start|>assistant\\n' }}\n{%- endif %}\n";

const char* kQwen3 =  // a Qwen3 GGUF (tools branch shortened)
    "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n{%- else %}\n    {%- if "
    "messages[0].role == 'system' %}\n        {{- '<|im_start|>system\\n' + messages[0].content "
    "+ '<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n{%- set ns = "
    "namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}\n{%- for message "
    "in messages[::-1] %}\n    {%- set index = (messages|length - 1) - loop.index0 %}\n    {%- "
    "if ns.multi_step_tool and message.role == \"user\" and message.content is string and "
    "not(message.content.startswith('<tool_response>') and "
    "message.content.endswith('</tool_response>')) %}\n        {%- set ns.multi_step_tool = "
    "false %}\n        {%- set ns.last_query_index = index %}\n    {%- endif %}\n{%- endfor "
    "%}\n{%- for message in messages %}\n    {%- if message.content is string %}\n        {%- "
    "set content = message.content %}\n    {%- else %}\n        {%- set content = '' %}\n    "
    "{%- endif %}\n    {%- if (message.role == \"user\") or (message.role == \"system\" and not "
    "loop.first) %}\n        {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>' "
    "+ '\\n' }}\n    {%- elif message.role == \"assistant\" %}\n        {%- set "
    "reasoning_content = '' %}\n        {%- if message.reasoning_content is string %}\n         "
    "   {%- set reasoning_content = message.reasoning_content %}\n        {%- else %}\n         "
    "   {%- if '</think>' in content %}\n                {%- set reasoning_content = "
    "content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}\n         "
    "       {%- set content = content.split('</think>')[-1].lstrip('\\n') %}\n            {%- "
    "endif %}\n        {%- endif %}\n        {%- if loop.index0 > ns.last_query_index %}\n      "
    "      {%- if loop.last or (not loop.last and reasoning_content) %}\n                {{- "
    "'<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + "
    "'\\n</think>\\n\\n' + content.lstrip('\\n') }}\n            {%- else %}\n                "
    "{{- '<|im_start|>' + message.role + '\\n' + content }}\n            {%- endif %}\n        "
    "{%- else %}\n            {{- '<|im_start|>' + message.role + '\\n' + content }}\n        "
    "{%- endif %}\n        {{- '<|im_end|>\\n' }}\n    {%- endif %}\n{%- endfor %}\n{%- if "
    "add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n    {%- if enable_thinking "
    "is defined and enable_thinking is false %}\n        {{- '<think>\\n\\n</think>\\n\\n' }}\n  "
    "  {%- endif %}\n{%- endif %}";

const char* kMistral01 =  // mistralai/Mistral-7B-Instruct-v0.1
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ "
    "'[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ "
    "message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles "
    "are supported!') }}{% endif %}{% endfor %}";

const char* kMistral03 =  // mistralai/Mistral-7B-Instruct-v0.3 (tools branches shortened)
    "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = "
    "messages[0][\"content\"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    "
    "{%- set loop_messages = messages %}\n{%- endif %}\n{{- bos_token }}\n{%- for message in "
    "loop_messages %}\n    {%- if message[\"role\"] == \"user\" %}\n        {%- if loop.last and "
    "system_message is defined %}\n            {{- \"[INST] \" + system_message + \"\\n\\n\" + "
    "message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST] \" + "
    "message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n    {%- elif message[\"role\"] "
    "== \"assistant\" %}\n        {{- \" \" + message[\"content\"]|trim + eos_token}}\n    {%- "
    "endif %}\n{%- endfor %}\n";

const char* kDeepSeekR1 =
    "{% if not add_generation_prompt is defined -%}\n  {%- set add_generation_prompt = false "
    "-%}\n{%- endif -%}\n{%- set ns = namespace(is_first=false, is_tool=false, "
    "is_output_first=true, system_prompt='') -%}\n{%- for message in messages -%}\n  {%- if "
    "message['role'] == 'system' -%}\n    {%- set ns.system_prompt = message['content'] -%}\n  "
    "{%- endif -%}\n{%- endfor -%}{{bos_token}}{{ns.system_prompt}}\n{%- for message in messages "
    "-%}\n  {%- if message['role'] == 'user' -%}\n    {%- set ns.is_tool = false "
    "-%}{{'<｜User｜>' + message['content']}}\n  {%- endif -%}\n  {%- if message['role'] == "
    "'assistant' and message['content'] is not none -%}\n    {%- if ns.is_tool "
    "-%}{{'<｜tool▁outputs▁end｜>' + message['content'] + '<｜end▁of▁sentence｜>'}}\n      {%- "
    "set ns.is_tool = false -%}\n    {%- else -%}\n      {%- set content = message['content'] "
    "-%}\n      {%- if '</think>' in content -%}\n        {%- set content = "
    "content.split('</think>')[-1] -%}\n      {%- endif -%}{{'<｜Assistant｜>' + content + "
    "'<｜end▁of▁sentence｜>'}}\n    {%- endif -%}\n  {%- endif -%}\n{%- endfor -%}\n{%- if "
    "add_generation_prompt and not ns.is_tool -%}{{'<｜Assistant｜><think>\\n'}}\n{%- endif %}";

const char* kGemma2 =  // google/gemma-2-2b-it
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not "
    "supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') "
    "%}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ "
    "'<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% "
    "endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}";

const char* kPhi35 =  // microsoft/Phi-3.5-mini-instruct
    "{% for message in messages %}{% if message['role'] == 'system' and message['content'] "
    "%}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' "
    "%}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == "
    "'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor "
    "%}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}";

const char* kTinyLlama =  // TinyLlama/TinyLlama-1.1B-Chat-v1.0
    "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + "
    "message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ "
    "'<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == "
    "'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% "
    "if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";

}  // namespace

const std::vector<RealTemplate>& real_chat_templates() {
  static const std::vector<RealTemplate> k = {
      {"Meta-Llama-3-8B-Instruct", "llama3", kLlama3},
      {"Llama-3.2-1B-Instruct", "llama3.1", kLlama32},
      {"Qwen2.5-7B-Instruct", "chatml", kQwen25},
      {"Qwen3", "qwen3", kQwen3},
      {"Mistral-7B-Instruct-v0.1", "mistral", kMistral01},
      {"Mistral-7B-Instruct-v0.3", "mistral-v3", kMistral03},
      {"DeepSeek-R1-Distill-Qwen-32B", "deepseek-r1", kDeepSeekR1},
      {"gemma-2-2b-it", "gemma", kGemma2},
      {"Phi-3.5-mini-instruct", "phi3", kPhi35},
      {"TinyLlama-1.1B-Chat-v1.0", "zephyr", kTinyLlama},
  };
  return k;
}

const std::vector<tok::ChatFormat>& all_chat_formats() {
  using F = tok::ChatFormat;
  static const std::vector<F> k = {F::radixchat,  F::llama2,      F::zephyr, F::chatml,
                                   F::llama3,     F::llama31,     F::qwen3,  F::mistral,
                                   F::mistral_v3, F::deepseek_r1, F::gemma,  F::phi3};
  return k;
}

std::unique_ptr<tok::Tokenizer> marker_vocab() {
  VocabPieces v = synthetic_vocab(400);
  for (const char* m : {"<|im_start|>",
                        "<|im_end|>",
                        "<|begin_of_text|>",
                        "<|start_header_id|>",
                        "<|end_header_id|>",
                        "<|eot_id|>",
                        "<|user|>",
                        "<|assistant|>",
                        "<|system|>",
                        "<|end|>",
                        "[INST]",
                        "[/INST]",
                        "<bos>",
                        "<start_of_turn>",
                        "<end_of_turn>",
                        "<｜begin▁of▁sentence｜>",
                        "<｜User｜>",
                        "<｜Assistant｜>",
                        "<｜end▁of▁sentence｜>",
                        "<think>",
                        "</think>"}) {
    // synthetic_vocab has <|user|>, <|end|>, ... as user-defined pieces: make them control.
    auto it = std::find(v.tokens.begin(), v.tokens.end(), m);
    if (it != v.tokens.end()) {
      v.types[it - v.tokens.begin()] = 3;
      continue;
    }
    v.tokens.push_back(m);
    v.scores.push_back(0);
    v.types.push_back(3);
  }
  model::GgufWriter w;
  add_vocab_metadata(v, /*add_space_prefix=*/true, w);
  const std::vector<uint8_t> b = w.serialize();
  auto f = model::GgufFile::from_memory({b.data(), b.size()});
  EXPECT_TRUE(f.ok());
  auto tok = tok::Tokenizer::from_gguf(**f);
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  return std::move(*tok);
}

}  // namespace rc::testing
