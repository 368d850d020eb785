// The `openai` npm package's structured-output calls against radixchat serve
// (run.sh starts it): chat.completions.create with response_format
// json_schema (strict), streaming and not, json_object, and a schema the
// server cannot honour (a 400 the SDK raises as BadRequestError). Each reply
// is parsed and validated with Ajv + ajv-formats. Exit 0 when all passed.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(process.cwd() + '/');
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { OpenAI } = await load('openai');
const Ajv = (await load('ajv')).default.default ?? (await load('ajv')).default;
const addFormats = (await load('ajv-formats')).default.default ?? (await load('ajv-formats')).default;

const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: 'none', maxRetries: 0 });
const ajv = new Ajv({ strict: false });
addFormats(ajv);
const model = (await client.models.list()).data[0].id;
let failures = 0;
const check = (ok, what, detail = '') => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? ': ' + detail : ''}`);
  if (!ok) failures++;
};

// Schemas without free-text strings: the bundled model writes prose into a
// free string and may not close it within max_tokens.
const schemas = {
  person: {
    type: 'object',
    properties: {
      name: { enum: ['Ann', 'Bob', 'Eve'] },
      age: { type: 'integer' },
      born: { type: 'string', format: 'date' },
      email: { type: 'string', format: 'email' },
      tags: { type: 'array', items: { type: 'boolean' }, maxItems: 3 },
    },
    required: ['name', 'age', 'born', 'email', 'tags'],
    additionalProperties: false,
  },
  event: {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      at: { type: 'string', format: 'date-time' },
      level: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
      score: { type: ['number', 'null'] },
    },
    required: ['id', 'at', 'level', 'score'],
    additionalProperties: false,
  },
  tree: {
    $ref: '#/$defs/node',
    $defs: {
      node: {
        type: 'object',
        properties: {
          v: { type: 'integer' },
          kids: { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 2 },
        },
        required: ['v', 'kids'],
        additionalProperties: false,
      },
    },
  },
  list: { type: 'array', items: { const: 'x' }, minItems: 2, maxItems: 4 },
};

for (const [name, schema] of Object.entries(schemas)) {
  const validate = ajv.compile(schema);
  for (const stream of [false, true]) {
    const what = `${name} (${stream ? 'stream' : 'non-stream'})`;
    try {
      const params = {
        model,
        messages: [{ role: 'user', content: `Give me a ${name} as JSON.` }],
        response_format: { type: 'json_schema', json_schema: { name, strict: true, schema } },
        max_tokens: 600,
        temperature: 1,
        seed: 7,
      };
      let text = '', finish = '';
      if (stream) {
        for await (const chunk of await client.chat.completions.create({ ...params, stream: true })) {
          const c = chunk.choices?.[0];
          if (c?.delta?.content) text += c.delta.content;
          if (c?.finish_reason) finish = c.finish_reason;
        }
      } else {
        const r = await client.chat.completions.create(params);
        text = r.choices[0].message.content;
        finish = r.choices[0].finish_reason;
      }
      check(finish === 'stop', `${what}: finish_reason stop`, finish);
      const value = JSON.parse(text);
      check(validate(value), `${what}: Ajv accepts the reply`,
            JSON.stringify(value) + ' ' + JSON.stringify(validate.errors));
    } catch (e) {
      check(false, what, `${e.constructor?.name}: ${e.message}`);
    }
  }
}

try {
  const r = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'JSON please' }],
    response_format: { type: 'json_object' },
    max_tokens: 40,
  });
  const text = r.choices[0].message.content;
  check(text.trim().startsWith('{'), 'json_object: the reply opens an object', text);
  // Cut by max_tokens or not, the reply is a complete object.
  let parsed = null;
  try {
    parsed = JSON.parse(text);
  } catch {}
  check(parsed !== null && typeof parsed === 'object', 'json_object parses at max_tokens', text);
} catch (e) {
  check(false, 'json_object', `${e.constructor?.name}: ${e.message}`);
}

try {
  await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'x' }],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'bad', schema: { type: 'string', if: { const: 'a' } } },
    },
  });
  check(false, 'an unsupported keyword is refused');
} catch (e) {
  check(e.status === 400 && /'if'/.test(e.message), 'an unsupported keyword is a 400 naming it',
        `${e.status} ${e.message}`);
}

console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
