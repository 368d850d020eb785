// ChatTemplate::reference_jinja(): a short jinja text per format, written for
// GGUF writers (tests, random models) that need tokenizer.chat_template.
// Each is what detect() maps back to its format; they cover the plain
// system/user/assistant case, not the tool calls of the real templates.
#include "chat-template.h"

namespace rc::tok {

std::string_view ChatTemplate::reference_jinja() const {
  switch (format_) {
    case ChatFormat::radixchat:
      return "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + "
             "message['content'] + '<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}"
             "{{ '<|assistant|>\\n' }}{% endif %}";
    case ChatFormat::zephyr:
      return "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + "
             "message['content'] + eos_token + '\\n' }}{% endfor %}{% if add_generation_prompt "
             "%}{{ '<|assistant|>\\n' }}{% endif %}";
    case ChatFormat::phi3:
      return "{% for m in messages %}{% if m['role'] == 'system' and m['content'] %}{{ "
             "'<|system|>\\n' + m['content'] + '<|end|>\\n' }}{% elif m['role'] == 'user' %}{{ "
             "'<|user|>\\n' + m['content'] + '<|end|>\\n' }}{% elif m['role'] == 'assistant' %}"
             "{{ '<|assistant|>\\n' + m['content'] + '<|end|>\\n' }}{% endif %}{% endfor %}{% "
             "if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}";
    case ChatFormat::llama2:
      return "{% for message in messages %}{% if message['role'] == 'user' %}{{ bos_token + "
             "'[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == "
             "'assistant' %}{{ ' ' + message['content'] + ' ' + eos_token }}{% elif "
             "message['role'] == 'system' %}{{ '<<SYS>>\\n' + message['content'] + "
             "'\\n<</SYS>>\\n\\n' }}{% endif %}{% endfor %}";
    case ChatFormat::mistral:
      return "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}{{ '[INST] ' + "
             "m['content'] + ' [/INST]' }}{% elif m['role'] == 'assistant' %}{{ m['content'] + "
             "eos_token }}{% endif %}{% endfor %}";
    case ChatFormat::mistral_v3:
      return "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}{{ '[INST] ' + "
             "m['content'] + '[/INST]' }}{% elif m['role'] == 'assistant' %}{{ ' ' + "
             "m['content'] + eos_token }}{% endif %}{% endfor %}";
    case ChatFormat::chatml:
      return "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
             "message['content'] + '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt "
             "%}{{ '<|im_start|>assistant\\n' }}{% endif %}";
    case ChatFormat::qwen3:
      return "{% for m in messages %}{% set c = m['content'] %}{% if m['role'] == 'assistant' "
             "and '</think>' in c %}{% set c = c.split('</think>')[-1].lstrip('\\n') %}{% endif "
             "%}{{ '<|im_start|>' + m['role'] + '\\n' + c + '<|im_end|>\\n' }}{% endfor %}{% if "
             "add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
    case ChatFormat::llama3:
      return "{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + "
             "message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + "
             "'<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ "
             "'<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";
    case ChatFormat::llama31:
      return "{{ bos_token }}{{ '<|start_header_id|>system<|end_header_id|>\\n\\n' }}{{ "
             "'Cutting Knowledge Date: December 2023\\nToday Date: 26 Jul 2024\\n\\n' }}{% if "
             "messages[0]['role'] == 'system' %}{{ messages[0]['content'] | trim }}{% set "
             "messages = messages[1:] %}{% endif %}{{ '<|eot_id|>' }}{% for m in messages %}{{ "
             "'<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + m['content'] | "
             "trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ "
             "'<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";
    case ChatFormat::deepseek_r1:
      return "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}{{ "
             "m['content'] }}{% elif m['role'] == 'user' %}{{ '<｜User｜>' + m['content'] }}{% "
             "elif m['role'] == 'assistant' %}{{ '<｜Assistant｜>' + "
             "m['content'].split('</think>')[-1] + '<｜end▁of▁sentence｜>' }}{% endif %}{% "
             "endfor %}{% if add_generation_prompt %}{{ '<｜Assistant｜><think>\\n' }}{% endif %}";
    case ChatFormat::gemma:
      return "{{ bos_token }}{% for m in messages %}{% set role = 'model' if m['role'] == "
             "'assistant' else m['role'] %}{{ '<start_of_turn>' + role + '\\n' + m['content'] | "
             "trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ "
             "'<start_of_turn>model\\n' }}{% endif %}";
  }
  return {};
}

}  // namespace rc::tok
