// Drives `radixchat-cli serve` with the official `openai` npm package, the
// way a user's script would, and checks that chat and completions work
// unchanged, streaming and not. Not run by ctest (it needs npm and network
// access once to install the package).
//
// Usage:
//   mkdir -p /tmp/oai && cd /tmp/oai && npm init -y && npm install openai
//   build/app/radixchat-cli serve --port 8080 &          # in another shell
//   cd /tmp/oai && node /path/to/tests/app/server/openai-client-check.mjs
//
// Environment: OPENAI_BASE_URL (default http://127.0.0.1:8080/v1),
// OPENAI_API_KEY (default "none"; the server ignores it unless started with
// --api-key). The `openai` package is resolved from the current directory.
// Exit status 0 when every check passed.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(process.cwd() + '/');
let OpenAI;
try {
  const mod = await import(pathToFileURL(require.resolve('openai')).href);
  OpenAI = mod.OpenAI ?? mod.default?.OpenAI ?? mod.default;
} catch (e) {
  console.error('cannot load the openai package from ' + process.cwd() +
                ' (run `npm install openai` there first): ' + e.message);
  process.exit(2);
}

const baseURL = process.env.OPENAI_BASE_URL ?? 'http://127.0.0.1:8080/v1';
const client = new OpenAI({ baseURL, apiKey: process.env.OPENAI_API_KEY ?? 'none', maxRetries: 0 });
let failures = 0;

function check(ok, what, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? ': ' + detail : ''}`);
  if (!ok) failures++;
}

async function step(name, fn) {
  try {
    await fn();
  } catch (e) {
    check(false, name, `${e.constructor?.name}: ${e.message}`);
  }
}

let model = '';
await step('models.list', async () => {
  const models = [];
  for await (const m of client.models.list()) models.push(m);
  check(models.length === 1, 'models.list returns the served model', JSON.stringify(models[0]));
  model = models[0].id;
  check(models[0].owned_by === 'radixchat', 'owned_by is radixchat');
});

const messages = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'What is a radix tree?' },
];
const sampling = { model, messages, max_tokens: 32, temperature: 0.7, seed: 42 };

let whole = '';
await step('chat non-streaming', async () => {
  const r = await client.chat.completions.create(sampling);
  whole = r.choices[0].message.content;
  check(typeof whole === 'string' && r.object === 'chat.completion', 'chat completion',
        JSON.stringify(whole));
  check(['stop', 'length'].includes(r.choices[0].finish_reason), 'finish_reason',
        r.choices[0].finish_reason);
  check(Number.isInteger(r.usage?.prompt_tokens_details?.cached_tokens),
        'usage.prompt_tokens_details.cached_tokens', JSON.stringify(r.usage));
});

await step('chat streaming', async () => {
  const stream = await client.chat.completions.create({
    ...sampling, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  check(chunks > 2, 'streamed chunks', String(chunks));
  check(text === whole, 'streamed text equals the non-streaming text (same seed)',
        JSON.stringify(text));
  check(usage && usage.prompt_tokens_details.cached_tokens > 0,
        'usage chunk, prompt served from the cache the second time', JSON.stringify(usage));
});

await step('chat streaming with the helper', async () => {
  const runner = client.chat.completions.stream({ ...sampling });
  const final = await runner.finalChatCompletion();
  check(final.choices[0].message.content === whole, 'stream helper final message matches');
});

let completionText = '';
await step('completions non-streaming', async () => {
  const r = await client.completions.create({
    model, prompt: 'Once upon a time', max_tokens: 24, temperature: 0,
  });
  completionText = r.choices[0].text;
  check(r.object === 'text_completion' && typeof completionText === 'string',
        'text completion', JSON.stringify(completionText));
});

await step('completions streaming', async () => {
  const stream = await client.completions.create({
    model, prompt: 'Once upon a time', max_tokens: 24, temperature: 0, stream: true,
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
  check(text === completionText, 'streamed completion equals the non-streaming one',
        JSON.stringify(text));
});

await step('errors are typed', async () => {
  try {
    await client.chat.completions.create({ ...sampling, model: 'gpt-4o' });
    check(false, 'unknown model is refused');
  } catch (e) {
    check(e instanceof OpenAI.NotFoundError, 'unknown model -> NotFoundError', e.message);
  }
  try {
    await client.chat.completions.create({ ...sampling, max_tokens: 'ten' });
    check(false, 'wrong type is refused');
  } catch (e) {
    check(e instanceof OpenAI.BadRequestError && e.param === 'max_tokens',
          'wrong type -> BadRequestError naming the param', e.message);
  }
});

await step('abort mid-stream', async () => {
  const controller = new AbortController();
  const stream = await client.completions.create(
      { model, prompt: 'Once upon a time', max_tokens: 400, ignore_eos: true, stream: true },
      { signal: controller.signal });
  let n = 0;
  try {
    for await (const _ of stream) {
      if (++n === 3) controller.abort();
    }
  } catch (e) {
    // The SDK reports the abort as an error; that is expected.
  }
  // The server notices at its next write and cancels the request.
  const metricsURL = baseURL.replace(/\/v1\/?$/, '') + '/metrics';
  const headers = process.env.OPENAI_API_KEY ? { Authorization: `Bearer ${process.env.OPENAI_API_KEY}` } : {};
  let active = -1;
  for (let i = 0; i < 50 && active !== 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const text = await (await fetch(metricsURL, { headers })).text();
    active = Number(/^radixchat_server_requests_active (\S+)$/m.exec(text)?.[1] ?? -1);
  }
  check(active === 0, 'aborted request was cancelled on the server');
});

console.log(failures === 0 ? 'all checks passed' : `${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
