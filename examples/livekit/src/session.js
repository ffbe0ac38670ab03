// A LiveKit AgentSession built from a call-start answer (docs/runtime.md): the plugins the
// configuration names, the prompt voiceapi already filled in, the tools as function tools,
// retrieval through voiceapi's knowledge route for each user turn, and the call's course
// reported back as it goes.

import { llm, voice } from '@livekit/agents';
import { buildPlugins, MissingCredentialError, UnsupportedProviderError } from './providers.js';
import { CallReport } from './report.js';
import { functionTools } from './tools.js';

const { ChatMessage } = llm;

/**
 * The agent of a call: the answer's prompt and tools, and retrieval through voiceapi's
 * knowledge route before the model answers a caller's words.
 */
export class VoiceAgent extends voice.Agent {
  constructor({ config, tools, voiceapi, log }) {
    super({ instructions: config.prompt_config.prompt, tools });
    this.knowledge = config.knowledge;
    this.voiceapi = voiceapi;
    this.log = log;
    this.retrieved = { messageId: null, text: null };
  }

  // Every model request passes here, spoken turns and text turns alike (a text turn skips
  // onUserTurnCompleted). The chunks found for the caller's last message join the system
  // prompt of this request only: the history does not grow by the knowledge base at each
  // turn, and no provider sees a system message between the others.
  async llmNode(chatCtx, toolCtx, modelSettings) {
    const text = await this.knowledgeFor(chatCtx);
    let ctx = chatCtx;
    if (text) {
      ctx = chatCtx.copy();
      const first = ctx.items.findIndex((i) => i.type === 'message' && i.role === 'system');
      const note = `Relevant knowledge for the caller's last message:\n${text}`;
      if (first >= 0) {
        const sys = ctx.items[first];
        ctx.items[first] = ChatMessage.create({ role: 'system', id: sys.id, createdAt: sys.createdAt, content: [...sys.content, note] });
      } else {
        ctx.items.unshift(ChatMessage.create({ role: 'system', content: note, createdAt: 0 }));
      }
    }
    return voice.Agent.default.llmNode(this, ctx, toolCtx, modelSettings);
  }

  // One retrieval per caller message: the model's second request of a turn (after a tool
  // call) reuses the first's chunks.
  async knowledgeFor(chatCtx) {
    if (!this.knowledge) return null;
    const last = chatCtx.items.findLast((i) => i.type === 'message' && i.role === 'user');
    const query = last?.textContent;
    if (!query?.trim()) return null;
    if (this.retrieved.messageId === last.id) return this.retrieved.text;
    let text = null;
    try {
      const chunks = await this.voiceapi.queryKnowledge(this.knowledge, query);
      text = chunks.length > 0 ? chunks.map((c) => c.text).join('\n---\n') : null;
    } catch (err) {
      // An answer without knowledge beats no answer: the call goes on.
      this.log.warn?.(`voiceapi: knowledge retrieval failed: ${err.message}`);
    }
    this.retrieved = { messageId: last.id, text };
    return text;
  }
}

/**
 * A refused call: the configuration names a provider this example cannot run, or lacks
 * a credential. The call is recorded as failed, with the reason, before this is thrown.
 */
export class CallRefused extends Error {
  constructor(cause) {
    super(cause.message, { cause });
    this.name = 'CallRefused';
    this.reason = cause instanceof UnsupportedProviderError ? 'unsupported_provider' : 'missing_credential';
  }
}

/**
 * Builds the session of a call from its call-start answer. A provider without a plugin
 * here or a missing credential ends the call as failed in voiceapi and throws CallRefused,
 * naming the provider: the worker hangs up and goes on with the next call.
 *
 * @param {{call: object, agent: object}} answer the data of POST /calls/start
 * @param {object} deps
 * @param {import('./voiceapi.js').VoiceAPI} deps.voiceapi
 * @param {object} deps.controls {hangUp(reason), transfer(entry), pressKeys(digits), say?(text)}
 * @param {object} [deps.env] where speech keys are read (process.env)
 * @param {Record<string, string>} [deps.baseURLs] groq or mistral at another address
 * @param {boolean} [deps.textOnly] a session of text turns: the speech plugins are still
 *   constructed (so a configuration that cannot run is refused alike) but left out of the
 *   session, which then opens no audio connection
 * @param {object} [deps.log]
 * @param {() => number} [deps.now]
 */
export async function buildCallSession(answer, deps) {
  const { voiceapi, controls, env, baseURLs, textOnly = false, log = console, now } = deps;
  const config = answer.agent;
  const report = new CallReport(voiceapi, answer.call.id, { log, now });
  let plugins;
  let agent;
  let session;
  const state = { id: answer.call.id, variables: {}, end: null, transfer: null };
  try {
    plugins = buildPlugins(config, { env, baseURLs });
    agent = new VoiceAgent({ config, tools: functionTools(config.llm_config.tools, state, controls), voiceapi, log });
    session = new voice.AgentSession(
      textOnly ? { llm: plugins.llm, vad: null, turnHandling: { turnDetection: null } } : { ...plugins },
    );
  } catch (err) {
    // The call is registered: whatever stops it here must end it, or it would count
    // toward the concurrency limits until voiceapi marks it abandoned.
    const known = err instanceof UnsupportedProviderError || err instanceof MissingCredentialError;
    const failure = known ? new CallRefused(err) : err;
    log.error?.(`call ${answer.call.id} refused: ${err.message}`);
    await report.end({ status: 'failed', reason: known ? failure.reason : 'runtime_error' });
    throw failure;
  }
  followTranscript(session, report);
  return new CallSession({ answer, session, agent, report, state, plugins });
}

function followTranscript(session, report) {
  session.on('conversation_item_added', ({ item }) => {
    if (item.type !== 'message') return;
    if (item.role === 'user') report.add('user', item.textContent);
    else if (item.role === 'assistant') report.add('agent', item.textContent);
  });
  session.on('function_tools_executed', ({ functionCalls, functionCallOutputs }) => {
    for (const fc of functionCalls) {
      const out = functionCallOutputs.find((o) => o?.callId === fc.callId);
      report.add('tool', `${fc.name}(${fc.args}) → ${out ? out.output : 'no result'}`);
    }
  });
}

/** A call's session and what it reports. */
export class CallSession {
  constructor({ answer, session, agent, report, state, plugins }) {
    Object.assign(this, { answer, session, agent, report, state, plugins });
    this.config = answer.agent;
    this.maxDurationTimer = null;
  }

  /**
   * Starts the session (in a room, or without one for text) and reports the call ongoing;
   * it is hung up at max_call_duration_ms.
   * @param {{room?: object, onMaxDuration?: () => void}} [opts]
   */
  async start({ room, onMaxDuration } = {}) {
    await this.session.start({ agent: this.agent, room });
    await this.report.ongoing();
    const max = this.config.call_config?.max_call_duration_ms;
    if (max > 0 && onMaxDuration) {
      this.maxDurationTimer = setTimeout(onMaxDuration, max);
      this.maxDurationTimer.unref?.();
    }
  }

  /** The greeting of prompt_config: a static welcome message, or one the model writes. */
  greet() {
    const p = this.config.prompt_config;
    if (p.first_speaker !== 'ai') return null;
    if (p.welcome_message_type === 'static' && p.welcome_message) return this.session.say(p.welcome_message);
    return this.session.generateReply({ instructions: 'Greet the caller and open the conversation.' });
  }

  /**
   * Ends the call once: closes the session and reports the end with the transcript, the
   * variables the tools set and, after a transfer, where the call went.
   */
  async end(reason) {
    if (this.ending) return this.ending;
    clearTimeout(this.maxDurationTimer);
    this.ending = (async () => {
      await this.session.close().catch(() => {});
      const extra = {};
      if (Object.keys(this.state.variables).length > 0) {
        extra.variables = { ...this.answer.call.variables, ...this.state.variables };
      }
      if (this.state.transfer) {
        extra.metadata = { ...this.answer.call.metadata, transferred_to: this.state.transfer };
      }
      await this.report.end({ reason: this.state.end ?? reason, ...extra });
    })();
    return this.ending;
  }
}
