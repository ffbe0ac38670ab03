// The custom functions' Idempotency-Key: the same keys as voiceapi's own engine for the
// same parts (the vectors conversation/function_key_vectors_test.go holds the Go side to),
// the same key when a message is answered again, another for every other call, and the
// header on each request, a real one to a loopback server.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { answeredMessage, functionKey, FunctionKeys } from '../src/function_key.js';
import { functionRequest, functionTools } from '../src/tools.js';

const vectors = JSON.parse(readFileSync(new URL('../../../conversation/testdata/function_keys.json', import.meta.url), 'utf8'));
const SHAPE = /^voiceapi_fn_[0-9a-f]{32}$/;

/** A RunContext's parts the keys read: the session's history and the answer's speech. */
function runContext(items, speechId) {
  return { session: { history: { items } }, speechHandle: { id: speechId } };
}
const user = (text) => ({ type: 'message', role: 'user', textContent: text });
const agent = (text) => ({ type: 'message', role: 'assistant', textContent: text });
const toolItem = { type: 'function_call', name: 'lookup_order' };

describe('custom function keys', () => {
  test('the same keys as voiceapi\'s engine for the same parts', () => {
    assert.ok(vectors.length >= 8, 'the shared vectors are read');
    for (const v of vectors) {
      assert.equal(functionKey(v.scope, v.position, v.message, v.name, v.ordinal), v.key, JSON.stringify(v));
      assert.match(v.key, SHAPE);
    }
  });

  test('the message answered is the last caller message, its place the items before it', () => {
    assert.deepEqual(answeredMessage([agent('Hi'), user('Where is order 42?'), toolItem]), { position: 1, message: 'Where is order 42?' });
    assert.deepEqual(answeredMessage([user('a'), agent('b'), user('c')]), { position: 2, message: 'c' });
    assert.deepEqual(answeredMessage([agent('Hello!')]), { position: 1, message: '' }, 'a greeting answers no message');
    assert.deepEqual(answeredMessage([]), { position: 0, message: '' });
  });

  test('one key per call; the same keys when the same message is answered again', () => {
    const keys = new FunctionKeys('call_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6');
    const history = [agent('Hi'), user('Where is order 42?')];
    const first = runContext(history, 'speech_1');
    const k1 = keys.next('lookup_order', first);
    const k2 = keys.next('lookup_order', runContext([...history, toolItem], 'speech_1')); // a later step of the answer
    const n1 = keys.next('note_order', first);
    assert.equal(k1, functionKey('call_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6', 1, 'Where is order 42?', 'lookup_order', 1));
    assert.equal(k2, functionKey('call_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6', 1, 'Where is order 42?', 'lookup_order', 2));
    assert.equal(new Set([k1, k2, n1]).size, 3, 'another call of the function, or another function, has its own key');
    // The reply interrupted and made again for the same message: another speech, the same keys.
    const again = runContext(history, 'speech_2');
    assert.equal(keys.next('note_order', again), n1, 'the order of the functions does not matter');
    assert.equal(keys.next('lookup_order', again), k1);
    assert.equal(keys.next('lookup_order', again), k2);
    // The next message, and another call, get keys of their own.
    const next = keys.next('lookup_order', runContext([...history, toolItem, agent('It ships Friday.'), user('And order 43?')], 'speech_3'));
    const other = new FunctionKeys('call_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D7').next('lookup_order', first);
    assert.equal(new Set([k1, k2, n1, next, other]).size, 5);
  });

  test('without a speech the answer is the message; without a call id no key', () => {
    const keys = new FunctionKeys('call_x');
    const ctx = { session: { history: { items: [user('Hi')] } } };
    assert.equal(keys.next('f', ctx), functionKey('call_x', 0, 'Hi', 'f', 1));
    assert.equal(keys.next('f', ctx), functionKey('call_x', 0, 'Hi', 'f', 2));
    assert.equal(keys.next('f', undefined), functionKey('call_x', 0, '', 'f', 1));
    assert.equal(new FunctionKeys(undefined).next('f', ctx), null);
  });

  test('the request carries the key, unless the tool names the header itself', () => {
    const t = { api_endpoint: 'https://api.example.com/o', http_method: 'GET' };
    const key = functionKey('call_x', 0, 'Hi', 'f', 1);
    assert.deepEqual(functionRequest(t, {}, key).init.headers, { 'Idempotency-Key': key }, 'with GET too');
    assert.deepEqual(functionRequest({ ...t, custom_function_headers: ['idempotency-key: mine'] }, {}, key).init.headers,
      { 'idempotency-key': 'mine' }, 'the tool\'s own value, whatever its case, replaces it once');
    assert.deepEqual(functionRequest(t, {}, null).init.headers, {}, 'no key, no header');
  });
});

describe('custom function requests to a loopback server', () => {
  let srv;
  let url;
  const seen = [];
  before(async () => {
    srv = http.createServer((req, res) => {
      seen.push(req.headers['idempotency-key']);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"ok":true}');
    });
    await new Promise((r) => srv.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${srv.address().port}/fn`;
  });
  after(() => new Promise((r) => srv.close(r)));

  test('each execution sends its key; a re-answer sends the same', async () => {
    const tool = { name: 'book', type: 'custom_function', api_endpoint: url, http_method: 'POST' };
    const tools = functionTools([tool], { id: 'call_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6', variables: {} }, {});
    const history = [user('Book a table for two.')];
    for (const speech of ['speech_1', 'speech_1', 'speech_2']) {
      const out = await tools.book.execute({ people: 2 }, { ctx: runContext(history, speech) });
      assert.equal(out.status, 200);
    }
    const want = (n) => functionKey('call_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D6', 0, 'Book a table for two.', 'book', n);
    assert.deepEqual(seen, [want(1), want(2), want(1)]);
  });
});
