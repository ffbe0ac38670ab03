// Agents, numbers and keys created through voiceapi's API, as a team would set them up
// for the runtime.

import { STANDIN_API_VERSION, STANDIN_DEPLOYMENT, STANDIN_KEY } from './standin.js';

/** Speech keys of the runtime's environment: the plugins need one to be constructed. */
export const SPEECH_ENV = {
  DEEPGRAM_API_KEY: 'dg-test-key',
  ELEVEN_API_KEY: 'el-test-key',
  CARTESIA_API_KEY: 'ca-test-key',
  RIME_API_KEY: 'ri-test-key',
};

/** A model the server's catalog lists for each provider (internal and azure take any). */
export const MODELS = {
  internal: 'llama3.2:3b',
  groq: 'llama-3.3-70b-versatile',
  mistral: 'mistral-small-latest',
  azure: '',
  bedrock_claude: 'anthropic.claude-haiku-4-5-20251001-v1:0',
};

/** An llm_config pointed at a stand-in (or, for bedrock_claude, at nothing reachable). */
export function llmConfig(provider, standIn, extra = {}) {
  const base = { provider, model: MODELS[provider], temperature: 0.2, ...extra };
  switch (provider) {
    case 'internal':
      return { ...base, base_url: standIn.baseURL };
    case 'azure':
      return { ...base, endpoint: standIn.origin, deployment: STANDIN_DEPLOYMENT, api_version: STANDIN_API_VERSION, api_key: STANDIN_KEY };
    case 'bedrock_claude':
      return { ...base, region: 'us-east-1', max_tokens: 512 };
    default:
      return { ...base, api_key: STANDIN_KEY };
  }
}

export const STT = {
  deepgram: { provider: 'deepgram', model: 'nova-3' },
  assemblyai: { provider: 'assemblyai', model: 'universal-streaming-english' },
};

export const TTS = {
  elevenlabs: { provider: 'elevenlabs', model: 'eleven_flash_v2_5', voice_id: 'JBFqnCBsd6RMkjVDRZzb', streaming_latency: 3 },
  cartesia: { provider: 'cartesia', model: 'sonic-2', voice_id: 'a0e99841-438c-4a64-b679-ae501e7d6091', speed: 'fast', emotion: 'positivity:high' },
  rime: { provider: 'rime', model: 'mistv2', speaker: 'cove', streaming_latency: 2, speed_alpha: 1.2 },
};

let numbers = 0;

/** A number of the workspace, unique per call of this function. */
export function nextNumber() {
  numbers++;
  return `+1415555${String(1000 + numbers).padStart(4, '0')}`;
}

/** A key that holds exactly what a runtime needs. */
export async function runtimeKey(server) {
  const res = await server.api('POST', '/api/v1/api-keys', { name: 'livekit runtime', scopes: ['calls:runtime'] });
  return res.token;
}

/** Creates an agent with these groups and publishes it; returns its id. */
export async function publishedAgent(server, groups) {
  const created = await server.api('POST', '/api/v1/agents', { ...groups, name: groups.name ?? 'LiveKit test agent' });
  await server.api('POST', `/api/v1/agents/${created.data.id}/publish`, {});
  return created.data.id;
}

/** A number whose inbound calls the agent answers; returns the phone number. */
export async function inboundNumber(server, agentId, variables) {
  const phone = nextNumber();
  await server.api('POST', '/api/v1/numbers', {
    phone_number: phone,
    provider: 'sip',
    inbound_agent_id: agentId,
    ...(variables ? { variables } : {}),
  });
  return phone;
}

/** The call as the owner reads it (a calls:runtime key may not read calls). */
export async function readCall(server, callId) {
  return (await server.api('GET', `/api/v1/calls/${callId}`)).data;
}
