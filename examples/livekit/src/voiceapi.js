// A small client of the voiceapi routes a runtime uses (docs/runtime.md): start a call,
// report its course, retrieve knowledge. It needs an API key with the calls:runtime scope.

/** An error answer of voiceapi: {message, code, errors?}, the shape of docs/api.md. */
export class VoiceAPIError extends Error {
  constructor(status, body, retryAfter) {
    super(`voiceapi ${status} ${body?.code ?? 'error'}: ${body?.message ?? 'no message'}`);
    this.name = 'VoiceAPIError';
    this.status = status;
    this.code = body?.code;
    this.errors = body?.errors;
    // Seconds to wait before asking again, for 429 concurrency_limit.
    this.retryAfter = retryAfter;
  }
}

// A request that gets no answer within this is abandoned: a phone is ringing meanwhile.
const DEFAULT_TIMEOUT_MS = 10_000;

export class VoiceAPI {
  /**
   * @param {object} opts
   * @param {string} opts.url the server's base URL, e.g. http://127.0.0.1:8080
   * @param {string} opts.token an API key with the calls:runtime scope
   * @param {number} [opts.timeoutMs]
   */
  constructor({ url, token, timeoutMs = DEFAULT_TIMEOUT_MS }) {
    if (!url) throw new Error('voiceapi: a server URL is required (VOICEAPI_URL)');
    if (!token) throw new Error('voiceapi: an API key with the calls:runtime scope is required (VOICEAPI_TOKEN)');
    this.url = url.replace(/\/+$/, '');
    this.token = token;
    this.timeoutMs = timeoutMs;
  }

  /**
   * POST /api/v1/calls/start: registers the call and answers what it runs.
   * @param {object} body {direction, to_number, from_number?, agent_id?, variables?, metadata?}
   * @param {{idempotencyKey?: string}} [opts] a key makes a retry after a timeout safe
   * @returns {Promise<{call: object, agent: object, variant: object}>}
   */
  async startCall(body, { idempotencyKey } = {}) {
    const headers = idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {};
    const answer = await this.request('POST', '/api/v1/calls/start', body, headers);
    return answer.data;
  }

  /**
   * POST /api/v1/dial-tasks/claim (docs/campaigns.md): leases up to max due tasks of the
   * workspace's campaigns, each with its call registered and the call-start answer.
   * @param {{max: number, lease_seconds?: number}} body
   * @returns {Promise<{tasks: Array<{campaign_id: string, recipient_id: string, attempt: number,
   *   to_number: string, from_number: string, lease_until: string, call: object, agent: object, variant: object}>,
   *   next_due_at: string|null}>}
   */
  async claimDialTasks(body) {
    const answer = await this.request('POST', '/api/v1/dial-tasks/claim', body);
    return answer.data;
  }

  /** PUT /api/v1/calls/{id}: a calls:runtime key gets 204 with no body, so nothing is returned. */
  async updateCall(callId, update) {
    await this.request('PUT', `/api/v1/calls/${encodeURIComponent(callId)}`, update);
  }

  /**
   * Retrieves knowledge for a user turn through the route of the call-start answer
   * (agent.knowledge): its method and path, its body members and the query.
   * @returns {Promise<Array<{text: string, score: number}>>} the chunks, best first
   */
  async queryKnowledge(route, query) {
    const answer = await this.request(route.method, route.path, { ...route.body, query });
    return answer.data;
  }

  async request(method, path, body, headers = {}) {
    const res = await fetch(this.url + path, {
      method,
      headers: {
        Authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    let parsed = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { code: 'not_json', message: text.slice(0, 200) };
      }
    }
    if (!res.ok) {
      const retryAfter = Number(res.headers.get('retry-after')) || undefined;
      throw new VoiceAPIError(res.status, parsed, retryAfter);
    }
    return parsed;
  }
}
