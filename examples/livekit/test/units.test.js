// The bridge's pure parts: the dialect of each provider's requests, the plugins' options,
// the tools' schemas and requests, the call-start requests of each direction, and how the
// call's course is reported.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isAgent } from '@livekit/agents';
import { inboundRequest, outboundRequest } from '../src/calls.js';
import { runDialer } from '../src/dialer.js';
import { adjustBody, checkSupported, ttsOptions, UnsupportedProviderError } from '../src/providers.js';
import { CallReport, TRANSCRIPT_BUDGET } from '../src/report.js';
import { functionRequest, functionTools, toolDescription, toolSchema } from '../src/tools.js';
import { VoiceAPIError } from '../src/voiceapi.js';
import worker, { dtmfCode, parseBaseURLs } from '../src/worker.js';

describe('providers', () => {
  const streamed = { model: 'm', messages: [], stream: true, stream_options: { include_usage: true }, max_completion_tokens: 64, parallel_tool_calls: true };

  test('Mistral gets only the members it accepts, max_tokens under its name', () => {
    assert.deepEqual(adjustBody({ provider: 'mistral', temperature: 0.3 }, streamed), {
      model: 'm', messages: [], stream: true, max_tokens: 64, parallel_tool_calls: true, temperature: 0.3,
    });
  });

  test('the OpenAI dialect keeps the body; a temperature of 0 is sent', () => {
    for (const provider of ['internal', 'groq', 'azure']) {
      assert.deepEqual(adjustBody({ provider, temperature: 0 }, streamed), { ...streamed, temperature: 0 });
    }
    assert.deepEqual(adjustBody({ provider: 'groq', temperature: null }, streamed), streamed);
  });

  test('a provider without a plugin is named in the refusal', () => {
    const ok = { llm_config: { provider: 'groq' }, stt_config: { provider: 'deepgram' }, tts_config: { provider: 'rime' } };
    assert.doesNotThrow(() => checkSupported(ok));
    const cases = [
      [{ ...ok, llm_config: { provider: 'bedrock_claude' } }, /^llm_config\.provider "bedrock_claude": .*Amazon Bedrock/],
      [{ ...ok, stt_config: { provider: 'assemblyai' } }, /^stt_config\.provider "assemblyai": .*AssemblyAI/],
      [{ ...ok, tts_config: { provider: 'playht' } }, /^tts_config\.provider "playht": .*no plugin for playht/],
    ];
    for (const [config, message] of cases) {
      assert.throws(() => checkSupported(config), (err) => err instanceof UnsupportedProviderError && message.test(err.message));
    }
  });

  test('each TTS plugin gets its fields of tts_config', () => {
    assert.deepEqual(ttsOptions({ provider: 'elevenlabs', model: 'eleven_flash_v2_5', voice_id: 'v1', streaming_latency: 3 }, 'k'),
      { apiKey: 'k', model: 'eleven_flash_v2_5', voiceId: 'v1', streamingLatency: 3 });
    assert.deepEqual(ttsOptions({ provider: 'cartesia', model: 'sonic-2', voice_id: 'v2', speed: 'slow', emotion: 'anger:low' }, 'k'),
      { apiKey: 'k', model: 'sonic-2', voice: 'v2', speed: 'slow', emotion: ['anger:low'] });
    assert.deepEqual(ttsOptions({ provider: 'cartesia', model: 'sonic-2', voice_id: 'v2', speed: null, emotion: null }, 'k'),
      { apiKey: 'k', model: 'sonic-2', voice: 'v2' });
    assert.deepEqual(ttsOptions({ provider: 'rime', model: 'mistv2', speaker: 'cove', streaming_latency: 1, speed_alpha: 0.9 }, 'k'),
      { apiKey: 'k', modelId: 'mistv2', speaker: 'cove', speedAlpha: 0.9 });
  });
});

describe('tools', () => {
  const transfer = {
    name: 'to_sales', type: 'transfer_call', description: 'Send the caller on.',
    phone_directory: [{ name: 'sales', phone_number: '+14155550100', description: 'Buying', transfer_type: 'cold' }],
  };

  test('schemas and descriptions follow the tool types', () => {
    assert.equal(toolDescription(transfer), 'Send the caller on. Destinations:\n- sales: Buying');
    assert.deepEqual(toolSchema(transfer).properties.destination.enum, ['sales']);
    assert.equal(toolDescription({ type: 'end_call', description: null }), 'End the call once the conversation is over, after saying goodbye.');
    const extract = toolSchema({ type: 'extract_dynamic_variable', variables: [
      { type: 'enum', name: 'size', description: 'Size', choices: ['s', 'm'] },
      { type: 'number', name: 'count', description: 'How many', choices: [] },
    ] });
    assert.deepEqual(extract.properties.size, { description: 'Size', type: 'string', enum: ['s', 'm'] });
    assert.equal(extract.properties.count.type, 'number');
    assert.equal(extract.additionalProperties, false);
    // A custom function's own schema, or an empty object when it has none or a broken one.
    assert.deepEqual(toolSchema({ type: 'custom_function', custom_function_parameters: '{"properties":{"q":{"type":"string"}}}' }),
      { type: 'object', properties: { q: { type: 'string' } } });
    assert.deepEqual(toolSchema({ type: 'custom_function', custom_function_parameters: '[1]' }).properties, {});
  });

  test('a custom function request carries headers, query and arguments where the method wants them', () => {
    const t = { api_endpoint: 'https://api.example.com/o?a=1', custom_function_headers: ['X-Key: s3cret'], custom_function_query: ['b=2'] };
    const post = functionRequest({ ...t, http_method: 'POST' }, { id: 7 });
    assert.equal(post.url, 'https://api.example.com/o?a=1&b=2');
    assert.deepEqual(post.init, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Key': 's3cret' }, body: '{"id":7}' });
    const get = functionRequest({ ...t, http_method: 'GET' }, { id: 7, tags: ['x'] });
    assert.equal(get.url, 'https://api.example.com/o?a=1&b=2&id=7&tags=%5B%22x%22%5D');
    assert.equal(get.init.body, undefined);
    assert.throws(() => functionRequest({ ...t, custom_function_headers: ['no colon'] }, {}), /headers item 0/);
    assert.throws(() => functionRequest({ ...t, api_endpoint: 'ftp://x' }, {}), /not an http\(s\) URL/);
  });

  test('transfer_call and extract_dynamic_variable change the call; a bad value is told to the model', async () => {
    const call = { variables: {} };
    const transfers = [];
    const tools = functionTools([transfer, null, {
      name: 'note', type: 'extract_dynamic_variable', variables: [{ type: 'enum', name: 'size', description: '', choices: ['s', 'm'] }],
    }], call, { transfer: (e) => transfers.push(e.name) });
    assert.deepEqual(Object.keys(tools), ['to_sales', 'note']);
    assert.deepEqual(await tools.note.execute({ size: 'xl' }, {}), { error: 'The variable size must be one of s, m.' });
    assert.deepEqual(await tools.note.execute({ size: 'm' }, {}), { set: { size: 'm' } });
    assert.deepEqual(call.variables, { size: 'm' });
    const result = await tools.to_sales.execute({ destination: 'sales' }, {});
    assert.equal(result.transferred_to.phone_number, '+14155550100');
    await Promise.resolve();
    assert.deepEqual(transfers, ['sales']);
    assert.equal(call.end, 'call_transfer');
  });
});

describe('call-start requests', () => {
  test('inbound from the SIP participant; a withheld caller is left out', () => {
    assert.deepEqual(inboundRequest({ 'sip.trunkPhoneNumber': '+14155550123', 'sip.phoneNumber': '+15551230000', 'sip.callID': 'SCL_1' }, { roomName: 'call-1' }), {
      direction: 'inbound', to_number: '+14155550123', from_number: '+15551230000', metadata: { sip_call_id: 'SCL_1', livekit_room: 'call-1' },
    });
    assert.equal(inboundRequest({ 'sip.trunkPhoneNumber': '+14155550123' }).from_number, undefined);
    assert.throws(() => inboundRequest({}), /not a SIP call/);
  });

  test('outbound from a dispatch', () => {
    assert.deepEqual(outboundRequest({ to_number: '+1', agent_id: 'agt_1', variables: { a: 1 } }),
      { direction: 'outbound', to_number: '+1', agent_id: 'agt_1', variables: { a: 1 } });
    assert.throws(() => outboundRequest({ agent_id: 'agt_1' }), /to_number/);
  });
});

describe('worker', () => {
  test('exports the agent; settings parse', () => {
    assert.ok(isAgent(worker));
    assert.deepEqual(parseBaseURLs('groq=http://gw/groq, mistral=http://gw/m?x=1'), { groq: 'http://gw/groq', mistral: 'http://gw/m?x=1' });
    assert.deepEqual(parseBaseURLs(undefined), {});
    assert.throws(() => parseBaseURLs('groq'), /PROVIDER=URL/);
    assert.deepEqual(['0', '9', '*', '#'].map(dtmfCode), [0, 9, 10, 11]);
  });
});

describe('CallReport', () => {
  // A voiceapi whose PUTs wait until the test lets them go.
  function slowAPI() {
    const puts = [];
    return {
      puts,
      updateCall(id, update) {
        return new Promise((resolve, reject) => puts.push({ update, resolve, reject }));
      },
    };
  }
  const tick = () => new Promise((r) => setImmediate(r));

  test('turns that arrive while a PUT is in flight go out together in the next', async () => {
    const api = slowAPI();
    let t = 1000;
    const report = new CallReport(api, 'call_1', { now: () => t, log: {} });
    report.add('agent', 'Hello');
    t += 500;
    report.add('user', 'Hi');
    report.add('user', 'I need help');
    await tick();
    assert.equal(api.puts.length, 1);
    assert.deepEqual(api.puts[0].update.transcript, [{ role: 'agent', content: 'Hello', start_ms: 0 }]);
    api.puts[0].resolve();
    await tick();
    await tick();
    assert.equal(api.puts.length, 2);
    assert.deepEqual(api.puts[1].update.transcript.map((i) => [i.content, i.start_ms]), [['Hello', 0], ['Hi', 500], ['I need help', 500]]);
    const ended = report.end({ reason: 'user_hangup' });
    await tick();
    assert.equal(api.puts.length, 2, 'the end waits for the PUT in flight');
    api.puts[1].resolve();
    await tick();
    await tick();
    assert.deepEqual(api.puts[2].update, { status: 'ended', disconnection_reason: 'user_hangup', transcript: report.transcript });
    api.puts[2].resolve();
    await ended;
    report.add('user', 'too late');
    assert.equal(report.transcript.length, 3);
  });

  test('the end is retried after a server error, not after a refusal', async () => {
    const sleeps = [];
    let attempts = 0;
    const flaky = { updateCall: async () => {
      attempts++;
      if (attempts < 3) throw new VoiceAPIError(503, { code: 'service_unavailable', message: 'The database does not answer.' });
    } };
    await new CallReport(flaky, 'c', { log: {}, sleep: async (ms) => sleeps.push(ms) }).end({ reason: 'x' });
    assert.equal(attempts, 3);
    assert.deepEqual(sleeps, [500, 1000]);

    attempts = 0;
    const refusing = { updateCall: async () => {
      attempts++;
      throw new VoiceAPIError(409, { code: 'conflict', message: 'The call is ended.' });
    } };
    const errors = [];
    await new CallReport(refusing, 'c', { log: { error: (m) => errors.push(m) }, sleep: async () => {} }).end({ reason: 'x' });
    assert.equal(attempts, 1);
    assert.match(errors[0], /the end of call c was not recorded: voiceapi 409 conflict: The call is ended\./);
  });

  // A voiceapi that takes every PUT at once and keeps them.
  function recordingAPI(refuse = () => null) {
    const puts = [];
    return {
      puts,
      async updateCall(id, update) {
        puts.push(update);
        const err = refuse(update);
        if (err) throw err;
      },
    };
  }
  const bodyBytes = (update) => Buffer.byteLength(JSON.stringify(update));
  const contentBytes = (transcript) => transcript.reduce((n, i) => n + Buffer.byteLength(i.content), 0);

  test('a transcript past the 1 MiB body keeps its first turns and the end says how many were left out', async () => {
    const api = recordingAPI();
    let t = 0;
    const report = new CallReport(api, 'c', { now: () => t, log: {} });
    const turns = 150; // of 10,000 characters each, about 1.5 MB
    for (let i = 0; i < turns; i++) {
      t += 1000;
      report.add(i % 2 ? 'user' : 'agent', `${i} `.padEnd(10_000, 'é'));
    }
    const variables = { order: 'x'.repeat(60_000) };
    await report.end({ reason: 'user_hangup', variables });
    const end = api.puts.at(-1);
    assert.equal(end.status, 'ended');
    assert.deepEqual(end.variables, variables);
    assert.ok(bodyBytes(end) <= 1 << 20, `the end's body is ${bodyBytes(end)} bytes`);
    assert.ok(contentBytes(end.transcript) <= 1 << 20);
    const kept = end.transcript.length - 1;
    assert.ok(kept > 0 && kept < turns);
    assert.deepEqual(end.transcript.slice(0, kept).map((i) => i.content.split(' ')[0]), [...Array(kept).keys()].map(String));
    const note = end.transcript.at(-1);
    assert.equal(note.role, 'tool');
    assert.match(note.content, new RegExp(`^\\[${turns - kept} later turns not reported`));
    assert.equal(note.start_ms, (kept + 1) * 1000, 'the omission starts where the first turn left out did');
    for (const put of api.puts.filter((u) => !u.status)) assert.ok(bodyBytes(put) <= TRANSCRIPT_BUDGET + 16, 'every report as it grows fits too');
  });

  test('past 2,000 turns the last item kept gives way to the omission', async () => {
    const api = recordingAPI();
    const report = new CallReport(api, 'c', { log: {} });
    for (let i = 0; i < 2_001; i++) report.add('user', `turn ${i}`);
    await report.end({ reason: 'user_hangup' });
    const end = api.puts.at(-1);
    assert.equal(end.transcript.length, 2_000);
    assert.equal(end.transcript.at(-2).content, 'turn 1998');
    assert.match(end.transcript.at(-1).content, /^\[2 later turns not reported/);
  });

  test('an end refused for its size goes again without the transcript, then bare', async () => {
    const tooLarge = new VoiceAPIError(413, { code: 'payload_too_large', message: 'The body is over 65536 bytes.' });
    const invalid = new VoiceAPIError(422, { code: 'validation_failed', message: 'The variables field is too large.' });
    const api = recordingAPI((u) => (u.transcript ? tooLarge : u.variables ? invalid : null));
    const warnings = [];
    const report = new CallReport(api, 'c', { log: { warn: (m) => warnings.push(m), error: (m) => assert.fail(m) }, sleep: async () => assert.fail('no wait') });
    report.add('user', 'Hello');
    await report.flush();
    await report.end({ reason: 'user_hangup', variables: { a: 1 } });
    const ends = api.puts.filter((u) => u.status);
    assert.deepEqual(ends.map((u) => Object.keys(u).sort()), [
      ['disconnection_reason', 'status', 'transcript', 'variables'], ['disconnection_reason', 'status', 'variables'], ['disconnection_reason', 'status'],
    ]);
    assert.equal(warnings.filter((w) => /the end of call c was refused/.test(w)).length, 2);
  });

  test('the end is retried after the key\'s rate limit, waiting its Retry-After', async () => {
    const sleeps = [];
    let attempts = 0;
    const limited = { updateCall: async () => {
      attempts++;
      if (attempts < 2) throw new VoiceAPIError(429, { code: 'rate_limited', message: 'Too many requests.' }, 7);
    } };
    const errors = [];
    await new CallReport(limited, 'c', { log: { error: (m) => errors.push(m) }, sleep: async (ms) => sleeps.push(ms) }).end({ reason: 'x' });
    assert.equal(attempts, 2, 'a 429 does not end the retries: the call would count toward the limits until abandoned');
    assert.deepEqual(sleeps, [7000]);
    assert.deepEqual(errors, []);
  });
});

describe('the campaign dialer', () => {
  test('claims only for free places, places each task once, and waits for next_due_at', async () => {
    const claims = [];
    const queue = [[{ recipient_id: 'r1', attempt: 1 }, { recipient_id: 'r2', attempt: 1 }], [{ recipient_id: 'r3', attempt: 1 }]];
    const stop = new AbortController();
    const waits = [];
    const voiceapi = {
      async claimDialTasks(body) {
        claims.push(body);
        const tasks = queue.shift() ?? [];
        if (tasks.length === 0 && queue.length === 0 && claims.length > 3) stop.abort();
        return { tasks, next_due_at: tasks.length ? null : new Date(Date.UTC(2026, 2, 2, 10, 0, 5)).toISOString() };
      },
    };
    const placed = [];
    let release;
    const held = new Promise((r) => (release = r));
    const place = async (task) => {
      placed.push(task.recipient_id);
      if (task.recipient_id === 'r1') await held; // r1's call runs on
    };
    const done = runDialer({
      voiceapi, place, capacity: 2, leaseSeconds: 30, idleMs: 1000, signal: stop.signal, log: { warn() {}, error() {} },
      now: () => Date.UTC(2026, 2, 2, 10, 0, 0),
      sleep: async (ms) => {
        waits.push(ms);
        if (waits.length === 1) release();
        await new Promise((r) => setImmediate(r));
      },
    });
    await done;
    assert.deepEqual(placed, ['r1', 'r2', 'r3']);
    assert.deepEqual(claims[0], { max: 2, lease_seconds: 30 }, 'the first claim asks for every free place');
    assert.ok(claims.slice(1).every((c) => c.max <= 2));
    assert.ok(waits.includes(5000), `waits ${waits}: the claim said the next task falls due in 5 s`);
  });
});
