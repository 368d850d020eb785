"""The "radixchat" chat template.

  <s><|system|>\n{system}<|end|>\n<|user|>\n{user}<|end|>\n<|assistant|>\n{reply}<|end|>\n ...

BOS (id 1) once at the start, as a token id (not text); the system block is
optional; each turn is appended verbatim, so earlier turns stay
byte-identical (and token-identical) as a conversation grows.
"""
BOS_ID = 1

JINJA = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
)


def render(system, turns, open_reply=False):
    """turns: list of (user, reply); reply None for the last turn => generation prompt."""
    s = f"<|system|>\n{system}<|end|>\n" if system else ""
    for u, a in turns:
        s += f"<|user|>\n{u}<|end|>\n<|assistant|>\n"
        if a is not None:
            s += f"{a}<|end|>\n"
    return s


def encode(sp, text):
    return [BOS_ID] + sp.encode(text)
