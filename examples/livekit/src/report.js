// Reports a call's course to voiceapi with PUT /api/v1/calls/{id}: ongoing when the agent
// answers, the transcript as it grows, the end with its reason.
//
// A PUT's transcript replaces the stored one, so each report sends the whole transcript.
// At most one PUT is in flight: turns that arrive meanwhile go out together in the next,
// so a fast exchange costs a request per burst, not per turn. The end is sent after
// whatever is in flight and retried, since an unreported end would keep the call counting
// toward the concurrency limits until voiceapi marks it abandoned.
//
// voiceapi has no way to append to a transcript, and a request body is at most 1 MiB: a
// call of hours says more. The transcript keeps its first turns while they fit (as
// voiceapi's own conversations do when they become calls), and the end closes it with one
// item saying how many later turns were left out. Should the end still be refused for its
// size (a server with a smaller --max-json-body), it is sent again without the transcript,
// then bare: the call's end matters more than its words.

import { VoiceAPIError } from './voiceapi.js';

// voiceapi's bounds of a transcript (docs/calls.md).
const MAX_CONTENT = 10_000;
const MAX_ITEMS = 2_000;
// The request body's limit (docs/calls.md), less room for the end's other members
// (variables and metadata, 64 KiB each at most) and the omission's item: the transcript,
// as JSON, fits in the rest, so its contents also stay under their 1 MiB together.
const MAX_BODY = 1 << 20;
export const TRANSCRIPT_BUDGET = MAX_BODY - 2 * 64 * 1024 - 4 * 1024;

// How often, and after how long, the end is sent again after a failure.
const END_ATTEMPTS = 4;
const END_BACKOFF_MS = 500;

export class CallReport {
  /**
   * @param {import('./voiceapi.js').VoiceAPI} voiceapi
   * @param {string} callId
   * @param {{now?: () => number, log?: object, sleep?: (ms: number) => Promise<void>}} [opts]
   */
  constructor(voiceapi, callId, { now = Date.now, log = console, sleep = defaultSleep } = {}) {
    this.voiceapi = voiceapi;
    this.callId = callId;
    this.now = now;
    this.log = log;
    this.sleep = sleep;
    this.startedAt = now();
    this.transcript = [];
    this.bytes = 0; // the transcript's size as JSON
    this.omitted = null; // {count, start_ms} of the turns past the budget
    this.sent = 0; // transcript items the last successful PUT carried
    this.inflight = null;
    this.ended = null;
  }

  /**
   * Adds a turn: role agent, user or tool. A turn past voiceapi's bounds is only
   * counted, for the end's omission item.
   */
  add(role, content) {
    if (this.ended || !content) return;
    const item = { role, content: content.slice(0, MAX_CONTENT), start_ms: Math.max(0, this.now() - this.startedAt) };
    const size = jsonBytes(item) + 1; // and its comma
    // Once a turn is left out, every later one is too: the transcript has no gaps. When the
    // list is full, the omission's item takes the last turn's place (finalTranscript).
    if (this.omitted || this.transcript.length >= MAX_ITEMS || this.bytes + size > TRANSCRIPT_BUDGET) {
      this.omitted ??= { count: 0, start_ms: item.start_ms };
      this.omitted.count++;
      return;
    }
    this.transcript.push(item);
    this.bytes += size;
    this.flush();
  }

  /** The transcript the end reports: the turns kept, then the omission's item if any. */
  finalTranscript() {
    if (!this.omitted) return this.transcript;
    let { count, start_ms } = this.omitted;
    let kept = this.transcript;
    if (kept.length >= MAX_ITEMS) {
      start_ms = kept[kept.length - 1].start_ms;
      kept = kept.slice(0, MAX_ITEMS - 1);
      count++;
    }
    const note = `[${count} later ${count === 1 ? 'turn' : 'turns'} not reported: the transcript reached voiceapi's limit (${MAX_ITEMS} items, 1 MiB)]`;
    return [...kept, { role: 'tool', content: note, start_ms }];
  }

  /** The agent answered: the call is ongoing. */
  async ongoing() {
    this.startedAt = this.now();
    await this.enqueue({ status: 'ongoing' });
  }

  /** Sends the transcript if it grew; waits for any PUT in flight first. */
  flush() {
    if (this.inflight || this.ended) return this.inflight;
    if (this.transcript.length === this.sent) return null;
    const count = this.transcript.length;
    return this.enqueue({ transcript: this.transcript.slice(0, count) }, () => {
      this.sent = count;
    });
  }

  enqueue(update, onSent = () => {}) {
    let ok = false;
    const run = (this.inflight ?? Promise.resolve())
      .then(() => this.voiceapi.updateCall(this.callId, update))
      .then(() => {
        ok = true;
        onSent();
      })
      .catch((err) => this.log.warn?.(`voiceapi: reporting call ${this.callId} failed: ${err.message}`));
    const tracked = run.finally(() => {
      if (this.inflight !== tracked) return;
      this.inflight = null;
      // Turns that arrived meanwhile; after a failure they wait for the next turn (or
      // the end, which carries the whole transcript) rather than retrying at once.
      if (ok) this.flush();
    });
    this.inflight = tracked;
    return tracked;
  }

  /**
   * Ends the call once: status ended (or failed), the reason, the whole transcript and
   * whatever else the end carries (variables, metadata). Later calls return the first.
   * @param {{status?: 'ended'|'failed', reason: string, variables?: object, metadata?: object}} end
   */
  end({ status = 'ended', reason, ...extra }) {
    if (this.ended) return this.ended;
    const bare = { status, disconnection_reason: reason };
    // The end as it should be, then, should its size be refused, lighter forms.
    const forms = [{ ...bare, transcript: this.finalTranscript(), ...extra }, { ...bare, ...extra }, bare];
    this.ended = this.sendEnd(forms);
    return this.ended;
  }

  async sendEnd(forms) {
    while (this.inflight) await this.inflight;
    let form = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.voiceapi.updateCall(this.callId, forms[form]);
        return;
      } catch (err) {
        // A body too large (413), or one a bound refused (422: the transcript's bytes, a
        // variable), goes again lighter; a 409 means the call is final already.
        const tooMuch = err instanceof VoiceAPIError && (err.status === 413 || err.status === 422);
        if (tooMuch && form < forms.length - 1) {
          this.log.warn?.(`voiceapi: the end of call ${this.callId} was refused (${err.message}); sending it without ${form === 0 ? 'the transcript' : 'variables and metadata'}`);
          form++;
          attempt = 0;
          continue;
        }
        // A refusal (4xx) will not change on a retry; a network failure, a 5xx or a 429
        // (the key's rate limit, shared by every call of the worker) may.
        const limited = err instanceof VoiceAPIError && err.status === 429;
        const final = err instanceof VoiceAPIError && err.status < 500 && !limited;
        if (final || attempt === END_ATTEMPTS) {
          this.log.error?.(`voiceapi: the end of call ${this.callId} was not recorded: ${err.message}`);
          return;
        }
        const backoff = END_BACKOFF_MS * 2 ** (attempt - 1);
        await this.sleep(limited && err.retryAfter ? Math.max(backoff, err.retryAfter * 1000) : backoff);
      }
    }
  }
}

function jsonBytes(value) {
  return Buffer.byteLength(JSON.stringify(value));
}

function defaultSleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
