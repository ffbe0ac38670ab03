// The Idempotency-Key of a custom function's request, as voiceapi's own conversation
// engine derives it (conversation/function_key.go; docs/conversations.md, "A custom
// function's Idempotency-Key"): `voiceapi_fn_` and 32 hex digits of a SHA-256 of the
// call's id, the number of items before the message being answered, the function's name,
// which call of it this is in the answer, and the message's text. So a function server
// sees one kind of key from either runtime, the same when the same message is answered
// again and another for every other call.

import { createHash } from 'node:crypto';

/** The header the key goes in. */
export const FUNCTION_KEY_HEADER = 'Idempotency-Key';
/** Every key starts with it, so a receiver's logs show where a key came from. */
export const FUNCTION_KEY_PREFIX = 'voiceapi_fn_';

/**
 * The key of one custom function call. The parts are NUL-separated (no id, count or
 * tool name holds a NUL) and the message comes last and whole, as it is the one part
 * that may hold one.
 */
export function functionKey(scope, position, message, name, ordinal) {
  const h = createHash('sha256');
  for (const part of ['voiceapi custom function call v1', scope, String(position), name, String(ordinal)]) {
    h.update(part, 'utf8');
    h.update(Buffer.of(0));
  }
  h.update(message, 'utf8');
  return FUNCTION_KEY_PREFIX + h.digest('hex').slice(0, 32);
}

/**
 * The keys of one call's custom function requests. The message answered is the last
 * caller message of the session's history and its place the number of items before it;
 * an answer is a LiveKit speech (its steps, a tool call and the reply after it, share
 * it), within which each function's calls are counted. A reply interrupted and made again
 * for the same message is another speech with the same message and place: its calls
 * count from one again and get the same keys, as a re-answer does in voiceapi.
 */
export class FunctionKeys {
  /** @param {string} callId the voiceapi call's id; without one no key is sent */
  constructor(callId) {
    this.callId = callId;
    this.answers = new Map(); // answer → calls so far of each function name
  }

  /**
   * Counts a call of the function named name and returns its key, or null without a
   * call id: a key shared by different calls would let a receiver drop a side effect.
   * @param {string} name
   * @param {object} [ctx] the tool's LiveKit RunContext ({session, speechHandle})
   */
  next(name, ctx) {
    if (!this.callId) return null;
    const { position, message } = answeredMessage(ctx?.session?.history?.items ?? []);
    const answer = ctx?.speechHandle?.id ?? `${position}\u0000${message}`;
    let calls = this.answers.get(answer);
    if (!calls) {
      calls = new Map();
      this.answers.set(answer, calls);
    }
    const ordinal = (calls.get(name) ?? 0) + 1;
    calls.set(name, ordinal);
    return functionKey(this.callId, position, message, name, ordinal);
  }
}

/** The last caller message of items and the number of items before it. */
export function answeredMessage(items) {
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i];
    if (it?.type === 'message' && it.role === 'user') return { position: i, message: it.textContent ?? '' };
  }
  // An answer no caller message started (a greeting the model writes): its place is the end.
  return { position: items.length, message: '' };
}
