// Multi-turn chat latency through the official `openai` npm package: any
// OpenAI-compatible server (radixchat-cli serve, llama-server, ...) gets the
// same conversations, and the script prints the time to first token of every
// turn. Each turn appends one user message of about 60 tokens to the whole
// history (the previous replies sent back unchanged), so a server that caches
// the history prefills only the new turn. Prints figures; not a test.
//
// Every request opens a fresh connection (undici Agent with keep-alive off):
// llama-server closes kept-alive sockets, and the SDK's retry back-off after
// such a close would otherwise be counted as latency.
//
// Usage:
//   mkdir -p /tmp/oai && cd /tmp/oai && npm init -y && npm install openai undici
//   cd /tmp/oai && node /path/to/tests/bench/multi-turn-ttft.mjs \
//       --url http://127.0.0.1:8080/v1 [--conversations 4] [--turns 8] \
//       [--max-tokens 32] [--temperature 0] [--canned-replies] [--json]
//
// --canned-replies sends a fixed assistant text back instead of each reply,
// so every server gets byte-identical conversations (random-weight models
// write replies that re-tokenize very differently from one server to the
// next, which would make the prompts differ).
// Output: one line per turn (conversation, turn, prompt tokens, cached tokens
// when the server reports them, TTFT ms), then the median TTFT of turns 2..N
// (the cached ones) and of turn 1. --json prints one object instead.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(process.cwd() + '/');
async function load(name) {
  try {
    return await import(pathToFileURL(require.resolve(name)).href);
  } catch (e) {
    console.error(`cannot load ${name} from ${process.cwd()} (npm install openai undici there): ${e.message}`);
    process.exit(2);
  }
}
const openaiModule = await load('openai');
const OpenAI = openaiModule.OpenAI ?? openaiModule.default;
const { Agent, fetch: undiciFetch } = await load('undici');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}
const baseURL = option('url', 'http://127.0.0.1:8080/v1');
const conversations = Number(option('conversations', '4'));
const turns = Number(option('turns', '8'));
const maxTokens = Number(option('max-tokens', '32'));
const temperature = Number(option('temperature', '0'));
const asJson = process.argv.includes('--json');
const cannedReplies = process.argv.includes('--canned-replies');

const freshConnection = new Agent({ pipelining: 0 });  // 0: no keep-alive
const client = new OpenAI({
  baseURL,
  apiKey: process.env.OPENAI_API_KEY ?? 'none',
  maxRetries: 0,
  fetch: (url, init) => undiciFetch(url, { ...init, dispatcher: freshConnection }),
});

// Deterministic text: the same conversations on every server and every run.
const words = ('the a cache prefix token model server request reply turn history page tree ' +
               'node memory pool batch thread kernel weight layer head query value key ' +
               'attention decode prefill sample greedy window context system user ' +
               'assistant message stream chunk figure table result measure quiet').split(' ');
let seed = 12345;
function nextRandom() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed;
}
function pickWords(n) {
  const picked = [];
  for (let i = 0; i < n; i++) picked.push(words[nextRandom() % words.length]);
  return picked.join(' ');
}
function userMessage(conversation, turn) {
  return `Conversation ${conversation}, question ${turn}: ${pickWords(30)}?`;
}
function cannedReply(conversation, turn) {
  return `Answer ${conversation}.${turn}: ${pickWords(20)}.`;
}

const models = [];
for await (const m of client.models.list()) models.push(m.id);
const model = models[0];

async function timedTurn(messages) {
  const started = performance.now();
  let ttft = null;
  let reply = '';
  let usage = null;
  const stream = await client.chat.completions.create({
    model, messages, max_tokens: maxTokens, temperature, stream: true,
    stream_options: { include_usage: true },
  });
  for await (const chunk of stream) {
    const piece = chunk.choices?.[0]?.delta?.content ?? '';
    if (piece && ttft === null) ttft = performance.now() - started;
    reply += piece;
    if (chunk.usage) usage = chunk.usage;
  }
  return { ttft: ttft ?? performance.now() - started, reply, usage };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const rows = [];
for (let c = 0; c < conversations; c++) {
  const messages = [{ role: 'system', content: 'You are a helpful assistant. Answer briefly.' }];
  for (let t = 1; t <= turns; t++) {
    messages.push({ role: 'user', content: userMessage(c, t) });
    const { ttft, reply, usage } = await timedTurn(messages);
    messages.push({ role: 'assistant', content: cannedReplies ? cannedReply(c, t) : reply });
    rows.push({
      conversation: c, turn: t, ttft_ms: ttft,
      prompt_tokens: usage?.prompt_tokens ?? null,
      cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
    });
    if (!asJson)
      console.log(`conv ${c} turn ${t}: prompt ${usage?.prompt_tokens ?? '?'} tokens, ` +
                  `cached ${usage?.prompt_tokens_details?.cached_tokens ?? '?'}, TTFT ${ttft.toFixed(1)} ms`);
  }
}
const later = rows.filter((r) => r.turn > 1).map((r) => r.ttft_ms);
const first = rows.filter((r) => r.turn === 1).map((r) => r.ttft_ms);
const summary = {
  url: baseURL, model, conversations, turns, max_tokens: maxTokens, temperature,
  canned_replies: cannedReplies,
  median_ttft_ms_after_first_turn: median(later), median_ttft_ms_first_turn: median(first), rows,
};
if (asJson) console.log(JSON.stringify(summary));
else
  console.log(`median TTFT, turns 2..${turns}: ${summary.median_ttft_ms_after_first_turn.toFixed(1)} ms; ` +
              `turn 1: ${summary.median_ttft_ms_first_turn.toFixed(1)} ms (${model} at ${baseURL})`);
