// Run by schema-suite.sh (in the directory holding its npm packages):
// every draft-4 schema of json-schema-test-suite, at max_tokens 32 and 512,
// refused (400) or answered with output Ajv validates.
import { createRequire } from 'node:module';

const require = createRequire(process.cwd() + '/');
const suite = require('json-schema-test-suite');
const Ajv = require('ajv-draft-04');
const addFormats = require('ajv-formats');

const base = process.env.BASE_URL;
const ajv = new Ajv({ strict: false, allErrors: false });
addFormats(ajv);

// Whitespace bytes between JSON tokens (outside strings).
function whitespace(text) {
  let n = 0;
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (' \n\t\r'.includes(ch)) n++;
  }
  return n;
}

const counts = {};
const refusals = {};
const bad = [];
let errors5xx = 0;
const files = suite.draft4();
for (const budget of [32, 512]) {
  const c = (counts[budget] = {
    schemas: 0, refused: 0, valid: 0, invalid: 0, failed: 0, tokens: 0, replies: 0, ws: 0,
  });
  for (const file of files) {
    for (const group of file.schemas) {
      c.schemas++;
      const body = {
        messages: [{ role: 'user', content: 'Reply with a JSON value.' }],
        temperature: 1,
        max_tokens: budget,
        response_format: { type: 'json_schema', json_schema: { name: 's', schema: group.schema } },
      };
      let res;
      try {
        res = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      } catch (e) {
        c.failed++;
        bad.push({ budget, file: file.name, what: group.description, why: String(e) });
        continue;
      }
      const reply = await res.json().catch(() => ({}));
      if (res.status >= 500) {
        errors5xx++;
        c.failed++;
        bad.push({ budget, file: file.name, what: group.description, why: `HTTP ${res.status}` });
        continue;
      }
      if (res.status === 400) {
        c.refused++;
        const why = (reply.error?.message ?? '').replace(/.*?: JSON schema: /, '').slice(0, 90);
        refusals[why] = (refusals[why] ?? 0) + 1;
        continue;
      }
      const text = reply.choices?.[0]?.message?.content ?? '';
      c.replies++;
      c.ws += whitespace(text);
      let value;
      let ok = false;
      try {
        value = JSON.parse(text);
        ok = ajv.validate(group.schema, value);
      } catch (e) {
        ok = false;
      }
      if (ok) {
        c.valid++;
        c.tokens += reply.usage?.completion_tokens ?? 0;
      } else {
        c.invalid++;
        bad.push({ budget, file: file.name, what: group.description, why: text.slice(0, 200) });
      }
    }
  }
}
for (const [why, n] of Object.entries(refusals).sort((a, b) => b[1] - a[1])) {
  console.log(`refused ${n}x: ${why}`);
}
for (const b of bad) console.log(`bad: max_tokens ${b.budget} ${b.file} / ${b.what}: ${b.why}`);
for (const [budget, c] of Object.entries(counts)) {
  const mean = c.valid ? (c.tokens / c.valid).toFixed(1) : '-';
  console.log(
    `max_tokens ${budget}: ${c.schemas} schemas, ${c.refused} refused (400), ${c.valid} valid, ` +
      `${c.invalid} invalid, ${c.failed} failed; mean tokens per valid reply ${mean}; ` +
      `whitespace bytes per reply ${c.replies ? (c.ws / c.replies).toFixed(1) : '-'}`,
  );
}
const invalid = Object.values(counts).reduce((n, c) => n + c.invalid + c.failed, 0);
process.exit(invalid || errors5xx ? 1 : 0);
