// The bridge against a real voiceapi server: every session is built from a real
// POST /calls/start answer, and text turns run through the LiveKit OpenAI plugin against a
// local stand-in of each provider. Audio plugins are constructed, never connected: no test
// here reaches a network beyond 127.0.0.1.

import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import * as cartesia from '@livekit/agents-plugin-cartesia';
import * as deepgram from '@livekit/agents-plugin-deepgram';
import * as elevenlabs from '@livekit/agents-plugin-elevenlabs';
import * as openai from '@livekit/agents-plugin-openai';
import * as rime from '@livekit/agents-plugin-rime';
import { initializeLogger } from '@livekit/agents';
import { DialError, inboundRequest, outboundRequest, startInboundCall, startOutboundCall } from '../src/calls.js';
import { runDialer } from '../src/dialer.js';
import { functionKey } from '../src/function_key.js';
import { buildCallSession, CallRefused } from '../src/session.js';
import { VoiceAPI } from '../src/voiceapi.js';
import {
  inboundNumber, llmConfig, MODELS, nextNumber, publishedAgent, readCall, runtimeKey, SPEECH_ENV, STT, TTS,
} from './support/fixtures.js';
import { missingPrerequisite, startVoiceAPI } from './support/server.js';
import { startStandIn } from './support/standin.js';

const missing = missingPrerequisite();
if (missing && process.env.CI === 'true') throw new Error(`CI=true and the bridge tests cannot run: ${missing}`);

initializeLogger({ pretty: false, level: 'error' });

const LLM_PROVIDERS = ['internal', 'groq', 'mistral', 'azure'];
const silent = { warn() {}, error() {} };

describe('the LiveKit bridge against a real voiceapi server', { skip: missing ?? false }, () => {
  let server;
  let voiceapi;
  const standIns = {};
  let functionServer;
  let kbId;

  before(async () => {
    server = await startVoiceAPI();
    voiceapi = new VoiceAPI({ url: server.url, token: await runtimeKey(server) });
    for (const provider of LLM_PROVIDERS) {
      standIns[provider] = await startStandIn({
        provider,
        model: provider === 'azure' ? undefined : MODELS[provider],
        apiKey: provider === 'internal' ? null : undefined,
        respond: (body) => script(body),
      });
    }
    functionServer = await startFunctionServer();
    const kb = await server.api('POST', '/api/v1/knowledge-bases', {
      name: 'Shop',
      texts: [{ title: 'Hours', content: 'The shop on Elm Street is open from nine to five, Monday to Saturday.' }],
    });
    kbId = kb.data.id;
  });

  after(async () => {
    for (const s of Object.values(standIns)) await s.close();
    await functionServer?.close();
    await server?.stop();
  });

  // Builds and returns the deps of a session: the runtime's key, the speech keys, the
  // public providers' stand-ins, and controls that record what the tools do to the call.
  function deps(extra = {}) {
    const controls = { hangUps: [], transfers: [], keys: [] };
    Object.assign(controls, {
      hangUp: (reason) => controls.hangUps.push(reason),
      transfer: (entry) => controls.transfers.push(entry),
      pressKeys: (digits) => controls.keys.push(digits),
    });
    return {
      voiceapi,
      controls,
      env: SPEECH_ENV,
      baseURLs: { groq: standIns.groq.baseURL, mistral: standIns.mistral.baseURL },
      log: silent,
      ...extra,
    };
  }

  const combinations = [
    { llm: 'internal', tts: 'elevenlabs', ttsClass: elevenlabs.TTS },
    { llm: 'groq', tts: 'cartesia', ttsClass: cartesia.TTS },
    { llm: 'mistral', tts: 'rime', ttsClass: rime.TTS },
    { llm: 'azure', tts: 'elevenlabs', ttsClass: elevenlabs.TTS },
  ];

  for (const c of combinations) {
    test(`a session is built from a real answer: ${c.llm}, deepgram, ${c.tts}`, async () => {
      const agentId = await publishedAgent(server, {
        llm_config: llmConfig(c.llm, standIns[c.llm], { tools: [{ name: 'end_call', type: 'end_call', description: null }] }),
        stt_config: STT.deepgram,
        tts_config: TTS[c.tts],
        prompt_config: { prompt: 'You answer for {{shop}}. The caller is {{customer_name}}.' },
      });
      const phone = await inboundNumber(server, agentId, { shop: 'Elm Street Shoes' });
      const answer = await voiceapi.startCall({
        direction: 'inbound', to_number: phone, from_number: '+15551230000', variables: { customer_name: 'Ada' },
      });
      const run = await buildCallSession(answer, deps());

      assert.ok(run.plugins.stt instanceof deepgram.STT);
      assert.equal(run.plugins.stt.model, 'nova-3');
      assert.ok(run.plugins.llm instanceof openai.LLM);
      assert.equal(run.plugins.llm.model, c.llm === 'azure' ? answer.agent.llm_config.deployment : answer.agent.llm_config.model);
      assert.ok(run.plugins.tts instanceof c.ttsClass);
      // The session carries the three plugins; none has connected (nothing started).
      assert.equal(run.session.stt, run.plugins.stt);
      assert.equal(run.session.llm, run.plugins.llm);
      assert.equal(run.session.tts, run.plugins.tts);
      assert.equal(run.agent.instructions, 'You answer for Elm Street Shoes. The caller is Ada.');
      assert.deepEqual(Object.keys(run.agent.toolCtx.functionTools), ['end_call']);
      assert.equal(standIns[c.llm].requests.length, 0, 'constructing reaches no provider');

      await run.end('test_over');
      const call = await readCall(server, answer.call.id);
      assert.equal(call.status, 'ended');
      assert.equal(call.disconnection_reason, 'test_over');
    });
  }

  for (const provider of LLM_PROVIDERS) {
    test(`text turns through the ${provider} plugin: retrieval, a custom function, a variable, end_call`, async () => {
      const standIn = standIns[provider];
      const before = standIn.requests.length;
      const agentId = await publishedAgent(server, {
        llm_config: llmConfig(provider, standIn, { knowledge_base_ids: [kbId], tools: shopTools(functionServer.url) }),
        stt_config: STT.deepgram,
        tts_config: TTS.elevenlabs,
        prompt_config: { prompt: 'You answer for the Elm Street shop. Be brief.' },
      });
      const phone = await inboundNumber(server, agentId, { shop_token: `tok-${provider}` });
      const d = deps({ textOnly: true });
      const run = await startInboundCall(
        { direction: 'inbound', to_number: phone, from_number: '+15551230000' },
        { ...d, idempotencyKey: `livekit-test-${provider}` },
      );

      await (await run.session.run({ userInput: 'When are you open? And where is order 42?' })).wait();
      await (await run.session.run({ userInput: 'Great, thanks. Bye!' })).wait();
      assert.deepEqual(d.controls.hangUps, ['agent_hangup'], 'end_call hangs up after the goodbye');
      const asked = run.session.history.items.findIndex((i) => i.type === 'message' && i.role === 'user');
      await run.end('user_hangup');

      assert.deepEqual(standIn.deviations, [], `${provider}'s protocol was followed`);
      const reqs = standIn.requests.slice(before);
      assert.equal(reqs.length, 4, 'two model calls a turn: the tool call, then the reply');
      const first = reqs[0].body;
      assert.equal(first.messages[0].role, 'system');
      assert.match(first.messages[0].content, /Elm Street shop/);
      assert.ok(
        first.messages.some((m) => m.role === 'system' && /nine to five/.test(m.content)),
        'the knowledge route retrieved the opening hours into the turn',
      );
      assert.deepEqual(first.tools.map((t) => t.function.name).sort(), ['end_call', 'lookup_order', 'note_order']);
      assert.equal(first.temperature, 0.2);
      const toolResult = reqs[1].body.messages.find((m) => m.role === 'tool' && /ships Friday/.test(m.content));
      assert.ok(toolResult, 'the custom function\'s answer went back to the model');

      const fn = functionServer.requests.at(-1);
      assert.equal(fn.method, 'POST');
      assert.equal(fn.url, `/orders?shop=tok-${provider}`);
      assert.equal(fn.headers['x-shop-token'], `tok-${provider}`);
      assert.deepEqual(JSON.parse(fn.body), { order_id: '42' });
      assert.ok(asked >= 0, 'the caller\'s first message is in the session\'s history');
      assert.equal(fn.headers['idempotency-key'],
        functionKey(run.answer.call.id, asked, 'When are you open? And where is order 42?', 'lookup_order', 1),
        'the key voiceapi\'s engine derives for the first lookup_order call answering that message');

      const call = await readCall(server, run.answer.call.id);
      assert.equal(call.status, 'ended');
      assert.equal(call.disconnection_reason, 'agent_hangup');
      assert.deepEqual(call.transcript.map((t) => t.role), ['user', 'tool', 'tool', 'agent', 'user', 'tool', 'agent']);
      assert.equal(call.transcript[0].content, 'When are you open? And where is order 42?');
      assert.equal(call.transcript.at(-1).content, 'Goodbye!');
      assert.equal(call.variables.order_id, '42', 'extract_dynamic_variable set the call\'s variable');
    });
  }

  test('a provider without a plugin is refused with its name: Bedrock, AssemblyAI', async () => {
    const cases = [
      { groups: { llm_config: llmConfig('bedrock_claude'), stt_config: STT.deepgram }, name: /Amazon Bedrock \(Claude\)/, group: 'llm_config' },
      { groups: { llm_config: llmConfig('groq', standIns.groq), stt_config: STT.assemblyai }, name: /AssemblyAI/, group: 'stt_config' },
    ];
    for (const c of cases) {
      const agentId = await publishedAgent(server, { ...c.groups, tts_config: TTS.elevenlabs });
      const phone = await inboundNumber(server, agentId);
      const request = inboundRequest({ 'sip.trunkPhoneNumber': phone, 'sip.phoneNumber': '+15551230000' });
      const err = await startInboundCall(request, deps()).then(() => null, (e) => e);
      assert.ok(err instanceof CallRefused, `refused, not crashed: ${err}`);
      assert.match(err.message, c.name);
      assert.match(err.message, new RegExp(`^${c.group}\\.provider`));
      assert.equal(err.reason, 'unsupported_provider');
      const calls = await server.api('GET', `/api/v1/calls?agent_id=${agentId}`);
      assert.equal(calls.data.length, 1);
      assert.equal(calls.data[0].status, 'failed', 'the refused call no longer counts as open');
      assert.equal(calls.data[0].disconnection_reason, 'unsupported_provider');
    }
  });

  test('a speech key missing from the runtime is refused naming the variable', async () => {
    const agentId = await publishedAgent(server, {
      llm_config: llmConfig('groq', standIns.groq), stt_config: STT.deepgram, tts_config: TTS.rime,
    });
    const phone = await inboundNumber(server, agentId);
    const env = { ...SPEECH_ENV, RIME_API_KEY: undefined };
    const err = await startInboundCall({ direction: 'inbound', to_number: phone }, deps({ env })).then(() => null, (e) => e);
    assert.ok(err instanceof CallRefused);
    assert.match(err.message, /RIME_API_KEY/);
    assert.equal(err.reason, 'missing_credential');
  });

  test('a session that cannot start ends its call as failed', async () => {
    const agentId = await publishedAgent(server, {
      llm_config: llmConfig('groq', standIns.groq), stt_config: STT.deepgram, tts_config: TTS.elevenlabs,
    });
    const phone = await inboundNumber(server, agentId);
    // A room object that is no LiveKit room: the session's start throws.
    const err = await startInboundCall({ direction: 'inbound', to_number: phone }, deps({ room: {} })).then(() => null, (e) => e);
    assert.ok(err, 'the start failed');
    const calls = await server.api('GET', `/api/v1/calls?agent_id=${agentId}`);
    assert.equal(calls.data[0].status, 'failed');
    assert.equal(calls.data[0].disconnection_reason, 'runtime_error');
  });

  test('a reported end frees the agent\'s concurrency slot; a start over the limit says when to ask again', async () => {
    const agentId = await publishedAgent(server, {
      llm_config: llmConfig('groq', standIns.groq), stt_config: STT.deepgram, tts_config: TTS.elevenlabs, max_concurrent_calls: 1,
    });
    const phone = await inboundNumber(server, agentId);
    const request = { direction: 'inbound', to_number: phone, from_number: '+15551230000' };
    const run = await startInboundCall(request, deps({ textOnly: true }));
    const refused = await voiceapi.startCall(request).then(() => null, (e) => e);
    assert.equal(refused?.status, 429);
    assert.equal(refused.code, 'concurrency_limit');
    assert.equal(refused.retryAfter, 5);
    await run.end('user_hangup');
    const next = await voiceapi.startCall(request);
    assert.equal(next.call.status, 'registered');
  });

  test('the end of a call whose transcript passes the 1 MiB body lands, with its first turns and the omission', async () => {
    const agentId = await publishedAgent(server, {
      llm_config: llmConfig('groq', standIns.groq), stt_config: STT.deepgram, tts_config: TTS.elevenlabs,
    });
    const phone = await inboundNumber(server, agentId);
    const run = await startInboundCall({ direction: 'inbound', to_number: phone, from_number: '+15551230001' }, deps({ textOnly: true }));
    const turns = 150; // of 10,000 characters each: hours of speech, about 1.5 MB
    for (let i = 0; i < turns; i++) run.report.add(i % 2 ? 'user' : 'agent', `turn ${i}: `.padEnd(10_000, 'and then '));
    await run.end('user_hangup');
    const call = await readCall(server, run.answer.call.id);
    assert.equal(call.status, 'ended');
    assert.equal(call.disconnection_reason, 'user_hangup');
    const kept = call.transcript.length - 1;
    assert.ok(kept > 0 && kept < turns, `${kept} turns kept`);
    assert.match(call.transcript[0].content, /^turn 0: /);
    assert.match(call.transcript[kept - 1].content, new RegExp(`^turn ${kept - 1}: `));
    assert.match(call.transcript[kept].content, new RegExp(`^\\[${turns - kept} later turns not reported`));
  });

  test('an outbound call starts from a call-start answer once the callee answers', async () => {
    const agentId = await publishedAgent(server, {
      llm_config: llmConfig('groq', standIns.groq, { tools: [] }),
      stt_config: STT.deepgram,
      tts_config: TTS.cartesia,
      prompt_config: {
        prompt: 'You remind {{customer_name}} of an appointment.',
        first_speaker: 'ai', welcome_message_type: 'static', welcome_message: 'Hi {{customer_name}}, this is Elm Street.',
      },
    });
    const to = nextNumber();
    const request = outboundRequest({ to_number: to, agent_id: agentId, variables: { customer_name: 'Ada' } });
    const answer = await voiceapi.startCall(request);
    assert.equal(answer.call.direction, 'outbound');
    const dialed = [];
    const run = await startOutboundCall(answer, deps({ textOnly: true, dial: async (a) => dialed.push(a.call.to_number) }));
    assert.deepEqual(dialed, [to]);
    assert.equal(run.agent.instructions, 'You remind Ada of an appointment.');
    await run.greet().waitForPlayout();
    await (await run.session.run({ userInput: 'Hello?' })).wait();
    await run.end('user_hangup');
    const call = await readCall(server, answer.call.id);
    assert.equal(call.status, 'ended');
    assert.deepEqual(call.transcript.map((t) => t.role), ['agent', 'user', 'agent']);
    assert.equal(call.transcript[0].content, 'Hi Ada, this is Elm Street.', 'the agent speaks first, with the welcome voiceapi filled in');

    // A callee who does not pick up: the call fails with the dial's reason.
    const unanswered = await voiceapi.startCall(outboundRequest({ to_number: nextNumber(), agent_id: agentId, variables: { customer_name: 'Bo' } }));
    const noAnswer = async () => {
      throw new DialError('no answer', 'no_answer');
    };
    await assert.rejects(startOutboundCall(unanswered, deps({ textOnly: true, dial: noAnswer })), DialError);
    const failed = await readCall(server, unanswered.call.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.disconnection_reason, 'no_answer');
  });

  test('a campaign runs end to end with the bridge as its dialer: each outcome reported through its call', async () => {
    const agentId = await publishedAgent(server, {
      llm_config: llmConfig('groq', standIns.groq, { tools: [] }),
      stt_config: STT.deepgram,
      tts_config: TTS.cartesia,
      prompt_config: {
        prompt: 'You remind {{customer_name}} of an appointment.',
        first_speaker: 'ai', welcome_message_type: 'static', welcome_message: 'Hi {{customer_name}}.',
      },
    });
    const caller = await server.api('POST', '/api/v1/numbers', { phone_number: nextNumber(), provider: 'sip' });
    const [answers, busy, noAnswer] = [nextNumber(), nextNumber(), nextNumber()];
    const campaign = await server.api('POST', '/api/v1/campaigns', {
      name: 'Reminders', agent_id: agentId, number_id: caller.data.id, max_concurrent: 2,
      window: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '23:59' },
      retry: { on: ['busy'], max_attempts: 1, backoff_minutes: 1 },
      recipients: [answers, busy, noAnswer].map((n, i) => ({ phone_number: n, variables: { customer_name: `Guest ${i}` } })),
    });
    const id = campaign.data.id;

    // The dial of each number: the first answers, the others do not connect.
    const dial = async (task) => {
      if (task.call.to_number === busy) throw new DialError('busy', 'busy');
      if (task.call.to_number === noAnswer) throw new DialError('no answer', 'no_answer');
    };
    const placed = [];
    const stop = new AbortController();
    const place = async (task) => {
      placed.push(task.to_number);
      let run;
      try {
        run = await startOutboundCall(task, deps({ textOnly: true, dial }));
      } catch (err) {
        if (err instanceof DialError) return; // reported failed with the dial's reason
        throw err;
      }
      await run.greet().waitForPlayout();
      await run.end('user_hangup');
    };
    const done = runDialer({ voiceapi, place, capacity: 2, leaseSeconds: 30, idleMs: 100, signal: stop.signal, log: silent });
    const deadline = Date.now() + 30_000;
    let shown;
    while (Date.now() < deadline) {
      shown = (await server.api('GET', `/api/v1/campaigns/${id}`)).data;
      if (shown.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    stop.abort();
    await done;
    assert.equal(shown.status, 'completed', `campaign still ${shown.status}: ${JSON.stringify(shown.counts)}`);
    assert.deepEqual(shown.counts.completed, { answered: 1, no_answer: 1 });
    assert.equal(shown.counts.exhausted, 1, 'busy is retried, but one attempt is all it gets');
    assert.deepEqual([...placed].sort(), [answers, busy, noAnswer].sort(), 'each number dialed once');
    const recipients = (await server.api('GET', `/api/v1/campaigns/${id}/recipients`)).data;
    const answered = recipients.find((r) => r.phone_number === answers);
    const call = await readCall(server, answered.attempts[0].call_id);
    assert.equal(call.status, 'ended');
    assert.equal(call.transcript[0].content, 'Hi Guest 0.', 'the recipient\'s variables reach the agent');
  });
});

// The model's script, the same for every provider: a question about hours and an order
// calls the order lookup and notes the order id; a goodbye ends the call.
function script(body) {
  const last = body.messages.at(-1);
  if (last.role === 'tool') {
    return /ended/.test(last.content) ? { text: 'Goodbye!' } : { text: 'We open at nine; order 42 ships Friday.' };
  }
  if (/order 42/.test(last.content ?? '')) {
    return { calls: [{ name: 'lookup_order', arguments: { order_id: '42' } }, { name: 'note_order', arguments: { order_id: '42' } }] };
  }
  if (/Bye/.test(last.content ?? '')) return { calls: [{ name: 'end_call', arguments: {} }] };
  return { text: 'Hello, this is the Elm Street shop.' };
}

function shopTools(functionURL) {
  return [
    {
      name: 'lookup_order',
      type: 'custom_function',
      description: 'Look an order up by its id.',
      http_method: 'POST',
      api_endpoint: `${functionURL}/orders`,
      custom_function_headers: ['X-Shop-Token: {{shop_token}}'],
      custom_function_query: ['shop={{shop_token}}'],
      custom_function_parameters: JSON.stringify({
        type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'],
      }),
    },
    {
      name: 'note_order',
      type: 'extract_dynamic_variable',
      description: 'Note the order the caller asks about.',
      variables: [{ type: 'string', name: 'order_id', description: 'The order id', choices: [] }],
    },
    { name: 'end_call', type: 'end_call', description: null },
  ];
}

// The endpoint of the custom function: records each request, answers the order's state.
async function startFunctionServer() {
  const requests = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ order_id: '42', status: 'ships Friday' }));
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${srv.address().port}`, requests, close: () => new Promise((r) => srv.close(r)) };
}
