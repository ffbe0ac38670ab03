// A local stand-in for the OpenAI-compatible providers the example reaches through the
// LiveKit OpenAI plugin: internal (OpenAI-compatible servers), groq, mistral and azure.
// Like voiceapi's Go stand-in (internal/llmtest) it checks each request as the provider
// documents it (path, api-version, credentials, the members the provider accepts, tool
// schemas, tool results answering a call) and answers in the provider's streaming shape.
// A request that deviates is answered as the provider would refuse it and recorded in
// `deviations`, which a test asserts is empty.

import http from 'node:http';

// The chat completion members each dialect accepts; Mistral refuses any other with 422
// extra_forbidden (stream_options, max_completion_tokens among them).
const FIELDS = {
  openai: ['model', 'messages', 'tools', 'tool_choice', 'temperature', 'top_p', 'max_tokens',
    'max_completion_tokens', 'stream', 'stream_options', 'stop', 'seed', 'n', 'parallel_tool_calls',
    'response_format', 'user', 'frequency_penalty', 'presence_penalty', 'logprobs', 'top_logprobs',
    'logit_bias'],
  mistral: ['model', 'messages', 'tools', 'tool_choice', 'temperature', 'top_p', 'max_tokens', 'stream',
    'stop', 'random_seed', 'response_format', 'presence_penalty', 'frequency_penalty', 'n', 'prediction',
    'parallel_tool_calls', 'prompt_mode', 'safe_prompt'],
};

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MISTRAL_CALL_ID = /^[a-zA-Z0-9]{9}$/;

export const STANDIN_KEY = 'standin-key-0123456789';
export const STANDIN_DEPLOYMENT = 'gpt-4o-prod';
export const STANDIN_API_VERSION = '2024-10-21';

/**
 * Starts a stand-in for one provider.
 * @param {object} opts
 * @param {'internal'|'groq'|'mistral'|'azure'} opts.provider
 * @param {string} [opts.model] the model it serves (not checked for azure, which routes by deployment)
 * @param {string|null} [opts.apiKey] null: an internal server without a key
 * @param {(req: object) => {text?: string, calls?: Array<{name: string, arguments: object}>}} opts.respond
 */
export async function startStandIn({ provider, model, apiKey = STANDIN_KEY, respond }) {
  const state = { requests: [], deviations: [], calls: 0 };
  const root = { internal: '/v1', mistral: '/v1', groq: '/openai/v1', azure: '/openai' }[provider];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => handle(req, res, raw));
  });

  function refuse(res, status, message) {
    state.deviations.push(message);
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
  }

  function handle(req, res, raw) {
    const url = new URL(req.url, 'http://standin');
    if (provider === 'azure' && url.searchParams.get('api-version') !== STANDIN_API_VERSION) {
      return refuse(res, 404, `api-version ${url.searchParams.get('api-version')}, want ${STANDIN_API_VERSION}`);
    }
    const credentialProblem = checkCredentials(req);
    if (credentialProblem) return refuse(res, credentialProblem.status, credentialProblem.message);
    // The plugin lists the models when the session starts, to warm the connection up.
    if (req.method === 'GET' && url.pathname === `${root}/models`) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: [{ id: model ?? STANDIN_DEPLOYMENT, object: 'model' }] }));
    }
    const want = provider === 'azure' ? `/openai/deployments/${STANDIN_DEPLOYMENT}/chat/completions` : `${root}/chat/completions`;
    if (req.method !== 'POST' || url.pathname !== want) return refuse(res, 404, `${req.method} ${url.pathname}, want POST ${want}`);
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) {
      return refuse(res, 400, `Content-Type ${req.headers['content-type']}, want application/json`);
    }
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return refuse(res, 400, 'the body is not JSON');
    }
    const problem = checkBody(body);
    if (problem) return refuse(res, provider === 'mistral' ? 422 : 400, problem);
    state.requests.push({ path: url.pathname, headers: req.headers, body });
    answer(res, body, respond(body));
  }

  function checkCredentials(req) {
    const auth = req.headers.authorization;
    if (provider === 'azure') {
      if (auth) return { status: 400, message: 'an Authorization header beside api-key' };
      if (req.headers['api-key'] !== apiKey) return { status: 401, message: 'wrong api-key' };
      return null;
    }
    if (apiKey === null) return auth ? { status: 400, message: `an Authorization header where no key is configured` } : null;
    return auth === `Bearer ${apiKey}` ? null : { status: 401, message: `Authorization ${auth}, want the key as a Bearer token` };
  }

  function checkBody(body) {
    const allowed = FIELDS[provider === 'mistral' ? 'mistral' : 'openai'];
    for (const name of Object.keys(body)) {
      if (!allowed.includes(name)) return `the member ${name}, which ${provider} does not accept`;
    }
    if (provider !== 'azure' && body.model !== model) return `model ${body.model}, want ${model}`;
    if (body.stream !== true) return 'stream is not true: the plugin streams';
    if (body.stream_options && body.stream !== true) return 'stream_options without stream';
    if (body.temperature !== undefined && (body.temperature < 0 || body.temperature > 2)) return `temperature ${body.temperature}`;
    for (const t of body.tools ?? []) {
      if (t.type !== 'function' || !TOOL_NAME.test(t.function?.name ?? '')) return `a tool ${JSON.stringify(t)}`;
      if (t.function.parameters && t.function.parameters.type !== 'object') return `tool ${t.function.name}'s parameters are not an object schema`;
    }
    const open = new Set();
    for (const m of body.messages ?? []) {
      if (!['system', 'user', 'assistant', 'tool'].includes(m.role)) return `a message of role ${m.role}`;
      for (const c of m.tool_calls ?? []) {
        if (provider === 'mistral' && !MISTRAL_CALL_ID.test(c.id)) return `tool call id ${c.id} is not of Mistral's form`;
        open.add(c.id);
      }
      if (m.role === 'tool' && !open.has(m.tool_call_id)) return `a tool result for ${m.tool_call_id}, which no call made`;
    }
    return null;
  }

  function callID() {
    state.calls++;
    // Mistral makes ids of nine letters and digits, the others call_…
    return provider === 'mistral' ? `c${String(state.calls).padStart(8, '0')}` : `call_${state.calls}`;
  }

  function answer(res, body, reply) {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    const base = { id: `chatcmpl-${state.requests.length}`, object: 'chat.completion.chunk', created: 1, model: body.model };
    const send = (o) => res.write(`data: ${JSON.stringify({ ...base, ...o })}\n\n`);
    if (reply.calls?.length) {
      const toolCalls = reply.calls.map((c, index) => ({
        index, id: callID(), type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) },
      }));
      send({ choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: null }] });
      send({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    } else {
      send({ choices: [{ index: 0, delta: { role: 'assistant', content: reply.text ?? '' }, finish_reason: null }] });
      send({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    }
    if (body.stream_options?.include_usage) send({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    res.end('data: [DONE]\n\n');
  }

  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    /** What the agent's base_url (internal) or the runtime's base URL override (groq, mistral) names. */
    baseURL: origin + root,
    requests: state.requests,
    deviations: state.deviations,
    close: () => new Promise((r) => server.close(r)),
  };
}
