// The STT, LLM and TTS plugins a call-start answer names, constructed and configured but
// not connected: a plugin opens its connection when the session first needs it.
//
// voiceapi keeps only the language model's credential (llm_config.api_key, in clear in the
// answer). The speech providers' keys belong to the runtime: its environment, under the
// names the plugins document.

import * as cartesia from '@livekit/agents-plugin-cartesia';
import * as deepgram from '@livekit/agents-plugin-deepgram';
import * as elevenlabs from '@livekit/agents-plugin-elevenlabs';
import * as openai from '@livekit/agents-plugin-openai';
import * as rime from '@livekit/agents-plugin-rime';
import { AzureOpenAI, OpenAI } from 'openai';

/** A provider the configuration names that this example has no LiveKit plugin for. */
export class UnsupportedProviderError extends Error {
  constructor(group, provider) {
    super(
      `${group}.provider "${provider}": this LiveKit example has no plugin for ${providerNames[provider] ?? provider}; ` +
        `choose a provider it supports (${supported[group].join(', ')}) or run this agent on another runtime`,
    );
    this.name = 'UnsupportedProviderError';
    this.group = group;
    this.provider = provider;
  }
}

/** A provider without its key: a speech key missing from the runtime's environment, or no llm_config.api_key. */
export class MissingCredentialError extends Error {
  constructor(group, provider, envName) {
    super(
      envName
        ? `${group}.provider "${provider}" needs the runtime's ${envName}: voiceapi keeps no speech provider keys`
        : `${group}.provider "${provider}" needs ${group}.api_key, which the agent's version does not set`,
    );
    this.name = 'MissingCredentialError';
    this.group = group;
    this.provider = provider;
    this.envName = envName;
  }
}

const providerNames = {
  bedrock_claude: 'Amazon Bedrock (Claude)',
  assemblyai: 'AssemblyAI',
};

// The public endpoints of the providers whose address is not in the configuration. A
// runtime may point them elsewhere (a gateway; the tests' stand-in) with baseURLs.
export const PUBLIC_BASE_URLS = {
  groq: 'https://api.groq.com/openai/v1',
  mistral: 'https://api.mistral.ai/v1',
};

const supported = {
  llm_config: ['internal', 'groq', 'mistral', 'azure'],
  stt_config: ['deepgram'],
  tts_config: ['elevenlabs', 'cartesia', 'rime'],
};

const speechKeys = {
  deepgram: 'DEEPGRAM_API_KEY',
  elevenlabs: 'ELEVEN_API_KEY',
  cartesia: 'CARTESIA_API_KEY',
  rime: 'RIME_API_KEY',
};

/**
 * Throws UnsupportedProviderError for the first group whose provider has no plugin here,
 * before anything is constructed.
 */
export function checkSupported(config) {
  for (const group of ['llm_config', 'stt_config', 'tts_config']) {
    const provider = config[group]?.provider;
    if (!supported[group].includes(provider)) throw new UnsupportedProviderError(group, provider);
  }
}

/**
 * The three plugins of a configuration (the answer's agent).
 * @param {object} config the call-start answer's agent
 * @param {object} [opts]
 * @param {Record<string, string|undefined>} [opts.env] where speech keys are read (process.env)
 * @param {Record<string, string>} [opts.baseURLs] groq or mistral elsewhere than PUBLIC_BASE_URLS
 * @returns {{stt: object, llm: object, tts: object}}
 */
export function buildPlugins(config, { env = process.env, baseURLs = {} } = {}) {
  checkSupported(config);
  return {
    stt: buildSTT(config.stt_config, env),
    llm: buildLLM(config.llm_config, baseURLs),
    tts: buildTTS(config.tts_config, env),
  };
}

function speechKey(group, provider, env) {
  const name = speechKeys[provider];
  const key = env[name];
  if (!key) throw new MissingCredentialError(group, provider, name);
  return key;
}

export function buildSTT(cfg, env = process.env) {
  if (cfg.provider !== 'deepgram') throw new UnsupportedProviderError('stt_config', cfg.provider);
  return new deepgram.STT({ model: cfg.model, apiKey: speechKey('stt_config', cfg.provider, env) });
}

/** The options each TTS plugin is constructed with, from tts_config. */
export function ttsOptions(cfg, apiKey) {
  switch (cfg.provider) {
    case 'elevenlabs':
      return { apiKey, model: cfg.model, voiceId: cfg.voice_id, streamingLatency: cfg.streaming_latency };
    case 'cartesia':
      return {
        apiKey,
        model: cfg.model,
        voice: cfg.voice_id,
        // voiceapi spells a medium emotion without a level, as Cartesia does.
        ...(cfg.speed ? { speed: cfg.speed } : {}),
        ...(cfg.emotion ? { emotion: [cfg.emotion] } : {}),
      };
    case 'rime':
      // Rime's HTTP API has no latency setting: streaming_latency is not sent.
      return {
        apiKey,
        modelId: cfg.model,
        speaker: cfg.speaker,
        ...(cfg.speed_alpha != null ? { speedAlpha: cfg.speed_alpha } : {}),
      };
    default:
      throw new UnsupportedProviderError('tts_config', cfg.provider);
  }
}

export function buildTTS(cfg, env = process.env) {
  const opts = ttsOptions(cfg, speechKey('tts_config', cfg.provider, env));
  switch (cfg.provider) {
    case 'elevenlabs':
      return new elevenlabs.TTS(opts);
    case 'cartesia':
      return new cartesia.TTS(opts);
    default:
      return new rime.TTS(opts);
  }
}

/**
 * The OpenAI plugin for an OpenAI-compatible provider, with the client the provider's
 * protocol wants: a base URL for internal, groq and mistral; Azure's deployment path,
 * api-version and api-key header for azure.
 */
export function buildLLM(cfg, baseURLs = {}) {
  const common = {
    maxRetries: 0, // the session retries, as LiveKit's own clients do
    fetch: dialectFetch(cfg),
  };
  const hasKey = cfg.api_key != null && cfg.api_key !== '';
  if (!hasKey && cfg.provider !== 'internal' && supported.llm_config.includes(cfg.provider)) {
    throw new MissingCredentialError('llm_config', cfg.provider, null);
  }
  let client;
  let model = cfg.model;
  switch (cfg.provider) {
    case 'internal':
      // A local model server may want no key; the placeholder is taken off the request.
      client = new OpenAI({ ...common, baseURL: cfg.base_url, apiKey: hasKey ? cfg.api_key : 'none' });
      break;
    case 'groq':
    case 'mistral':
      client = new OpenAI({
        ...common,
        baseURL: baseURLs[cfg.provider] ?? PUBLIC_BASE_URLS[cfg.provider],
        apiKey: cfg.api_key,
      });
      break;
    case 'azure':
      client = new AzureOpenAI({
        ...common,
        endpoint: cfg.endpoint,
        deployment: cfg.deployment,
        apiVersion: cfg.api_version,
        apiKey: cfg.api_key,
      });
      // Azure routes by deployment; the body's model is informative only.
      model = cfg.model || cfg.deployment;
      break;
    default:
      throw new UnsupportedProviderError('llm_config', cfg.provider);
  }
  return new openai.LLM({
    model,
    client,
    ...(cfg.max_tokens != null ? { maxCompletionTokens: cfg.max_tokens } : {}),
  });
}

// The chat completion members Mistral accepts: it refuses any other with 422
// extra_forbidden, stream_options and max_completion_tokens among them.
const MISTRAL_FIELDS = new Set([
  'model', 'messages', 'tools', 'tool_choice', 'temperature', 'top_p', 'max_tokens', 'stream',
  'stop', 'random_seed', 'response_format', 'presence_penalty', 'frequency_penalty', 'n',
  'prediction', 'parallel_tool_calls', 'prompt_mode', 'safe_prompt',
]);

/**
 * A fetch that adjusts each chat completion body to the provider: the configured
 * temperature (the plugin leaves out a temperature of 0), max_tokens under Mistral's name
 * and without the members Mistral refuses, no Authorization for an internal server
 * without a key.
 */
export function dialectFetch(cfg) {
  return async (url, init = {}) => {
    const headers = new Headers(init.headers);
    if (cfg.provider === 'internal' && (cfg.api_key == null || cfg.api_key === '')) headers.delete('authorization');
    let body = init.body;
    if (typeof body === 'string' && String(url).includes('/chat/completions')) {
      body = JSON.stringify(adjustBody(cfg, JSON.parse(body)));
      headers.delete('content-length');
    }
    return fetch(url, { ...init, headers, body });
  };
}

export function adjustBody(cfg, body) {
  const out = { ...body };
  if (cfg.temperature != null) out.temperature = cfg.temperature;
  if (cfg.provider !== 'mistral') return out;
  if (out.max_completion_tokens != null) {
    out.max_tokens = out.max_completion_tokens;
  }
  for (const name of Object.keys(out)) {
    if (!MISTRAL_FIELDS.has(name)) delete out[name];
  }
  return out;
}
