// Reports a call's course to voiceapi with PUT /api/v1/calls/{id}: ongoing when the agent
// answers, the transcript as it grows, the end with its reason.
//
// A PUT's transcript replaces the stored one, so each report sends the whole transcript.
// At most one PUT is in flight: turns that arrive meanwhile go out together in the next,
// so a fast exchange costs a request per burst, not per turn. The end is sent after
// whatever is in flight and retried, since an unreported end would keep the call counting
// toward the concurrency limits until voiceapi marks it abandoned.

import { VoiceAPIError } from './voiceapi.js';

// voiceapi's bounds of a transcript item (docs/calls.md).
const MAX_CONTENT = 10_000;
const MAX_ITEMS = 2_000;

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
    this.sent = 0; // transcript items the last successful PUT carried
    this.inflight = null;
    this.ended = null;
  }

  /** Adds a turn: role agent, user or tool. */
  add(role, content) {
    if (this.ended || !content || this.transcript.length >= MAX_ITEMS) return;
    this.transcript.push({ role, content: content.slice(0, MAX_CONTENT), start_ms: Math.max(0, this.now() - this.startedAt) });
    this.flush();
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
    this.ended = this.sendEnd({ status, disconnection_reason: reason, transcript: this.transcript, ...extra });
    return this.ended;
  }

  async sendEnd(update) {
    while (this.inflight) await this.inflight;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.voiceapi.updateCall(this.callId, update);
        return;
      } catch (err) {
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

function defaultSleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
