// The LiveKit Agents worker: each job is one phone call. An inbound SIP call arrives as a
// room with the caller's SIP participant in it; an outbound call is a dispatch whose
// metadata names the number to call (and the agent, or the workspace number that calls).
// Run: node src/worker.js start (docs/runtime.md, "Running the LiveKit example").

import { cli, defineAgent, ServerOptions } from '@livekit/agents';
import { ParticipantKind, RoomEvent } from '@livekit/rtc-node';
import { AgentDispatchClient, SipClient } from 'livekit-server-sdk';
import { fileURLToPath } from 'node:url';
import { DialError, inboundRequest, outboundRequest, startInboundCall, startOutboundCall } from './calls.js';
import { runDialer } from './dialer.js';
import { CallRefused } from './session.js';
import { VoiceAPI } from './voiceapi.js';

/**
 * The worker's settings from its environment: voiceapi's URL and calls:runtime key, the
 * SIP trunk for outbound calls, and LLM_BASE_URLS ("groq=URL,mistral=URL") to reach a
 * public provider through a gateway.
 */
export function workerSettings(env = process.env) {
  return {
    voiceapi: { url: env.VOICEAPI_URL, token: env.VOICEAPI_TOKEN },
    outboundTrunkId: env.SIP_OUTBOUND_TRUNK_ID,
    baseURLs: parseBaseURLs(env.LLM_BASE_URLS),
    agentName: env.LIVEKIT_AGENT_NAME || 'voiceapi',
  };
}

export function parseBaseURLs(value) {
  const out = {};
  for (const item of (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const at = item.indexOf('=');
    if (at <= 0) throw new Error(`LLM_BASE_URLS: ${JSON.stringify(item)} is not PROVIDER=URL`);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

// DTMF codes of the keypad's keys (RFC 4733): digits are themselves, * is 10, # is 11.
export function dtmfCode(key) {
  if (key === '*') return 10;
  if (key === '#') return 11;
  return Number(key);
}

/** What the tools do to a call in a LiveKit room with a SIP participant. */
function roomControls(ctx, sip, holder) {
  return {
    hangUp: async () => {
      await holder.run?.end('agent_hangup');
      await ctx.deleteRoom(); // ends the SIP leg with the room
    },
    // A cold transfer (SIP REFER), with the tool's custom SIP headers.
    transfer: async (entry, tool) => {
      await sip.transferSipParticipant(ctx.room.name, holder.participant.identity, `tel:${entry.phone_number}`, {
        headers: tool.custom_sip_headers ?? {},
      });
      await holder.run?.end('call_transfer');
    },
    pressKeys: async (digits) => {
      for (const key of digits) await ctx.room.localParticipant.publishDtmf(dtmfCode(key), key);
    },
    say: (text) => holder.run?.session.say(text),
  };
}

async function entry(ctx) {
  const settings = workerSettings();
  const voiceapi = new VoiceAPI(settings.voiceapi);
  const sip = new SipClient(process.env.LIVEKIT_URL, process.env.LIVEKIT_API_KEY, process.env.LIVEKIT_API_SECRET);
  const holder = {};
  const deps = {
    voiceapi,
    controls: roomControls(ctx, sip, holder),
    baseURLs: settings.baseURLs,
    room: ctx.room,
    onMaxDuration: () => holder.run?.end('max_duration_reached').then(() => ctx.deleteRoom()),
  };
  await ctx.connect();
  const dispatch = ctx.job.metadata ? JSON.parse(ctx.job.metadata) : null;
  try {
    if (dispatch?.dial_task || dispatch?.to_number) {
      // A campaign's dial task carries its call-start answer (the dialer below); a plain
      // outbound dispatch asks for one.
      const answer = dispatch.dial_task
        ?? await voiceapi.startCall(outboundRequest(dispatch), { idempotencyKey: `livekit-job-${ctx.job.id}` });
      holder.participant = { identity: `sip-${answer.call.id}` };
      holder.run = await startOutboundCall(answer, { ...deps, dial: (a) => dialSIP(sip, settings, ctx.room.name, a, holder) });
    } else {
      holder.participant = await ctx.waitForParticipant();
      if (holder.participant.kind !== ParticipantKind.SIP) throw new Error(`participant ${holder.participant.identity} is not a SIP caller`);
      const request = inboundRequest(holder.participant.attributes, { roomName: ctx.room.name });
      holder.run = await startInboundCall(request, { ...deps, idempotencyKey: `livekit-room-${ctx.room.name}` });
      holder.run.greet();
    }
  } catch (err) {
    // A refused call was already recorded as failed; any other failure is logged here.
    // Either way the caller is hung up and the worker takes the next job.
    if (!(err instanceof CallRefused || err instanceof DialError)) console.error(`call not answered: ${err.message}`);
    await ctx.deleteRoom().catch(() => {});
    ctx.shutdown(err.message);
    return;
  }
  ctx.room.on(RoomEvent.ParticipantDisconnected, (p) => {
    if (p.identity === holder.participant.identity) holder.run.end('user_hangup').then(() => ctx.shutdown('hangup'));
  });
  ctx.addShutdownCallback(() => holder.run.end('worker_shutdown'));
}

async function dialSIP(sip, settings, roomName, answer, holder) {
  if (!settings.outboundTrunkId) throw new DialError('SIP_OUTBOUND_TRUNK_ID is not set: no trunk to dial out on');
  try {
    await sip.createSipParticipant(settings.outboundTrunkId, answer.call.to_number, roomName, {
      participantIdentity: holder.participant.identity,
      fromNumber: answer.call.from_number ?? undefined,
      waitUntilAnswered: true,
      ringingTimeout: Math.round((answer.agent.call_config?.ring_duration_ms ?? 30_000) / 1000),
    });
  } catch (err) {
    // LiveKit reports the SIP status of a call that did not connect (486 busy, 480 or
    // 408 no answer) in the error's metadata.
    const status = Number(err.metadata?.sip_status_code);
    const reason = status === 486 ? 'busy' : status === 480 || status === 408 ? 'no_answer' : 'dial_failed';
    throw new DialError(`dialing ${answer.call.to_number} failed: ${err.message}`, reason);
  }
}

export default defineAgent({ entry });

/**
 * `node src/worker.js dial`: claims voiceapi's campaign dial tasks and dispatches each to
 * this worker's agent in a room of its own, the task (with its call-start answer, whose
 * credentials stay within the LiveKit deployment) as the dispatch's metadata. voiceapi
 * bounds the calls in progress by each campaign's max_concurrent; DIAL_CAPACITY bounds the
 * tasks one claim takes (docs/campaigns.md, docs/runtime.md).
 */
async function dialCampaigns() {
  const settings = workerSettings();
  const voiceapi = new VoiceAPI(settings.voiceapi);
  const dispatches = new AgentDispatchClient(process.env.LIVEKIT_URL, process.env.LIVEKIT_API_KEY, process.env.LIVEKIT_API_SECRET);
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  process.once('SIGINT', () => stop.abort());
  await runDialer({
    voiceapi,
    capacity: Number(process.env.DIAL_CAPACITY) || 10,
    signal: stop.signal,
    place: (task) => dispatches.createDispatch(`dial-${task.call.id}`, settings.agentName, { metadata: JSON.stringify({ dial_task: task }) }),
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'dial') {
  dialCampaigns().catch((err) => {
    console.error(err.message);
    process.exit(1);
  });
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  cli.runApp(new ServerOptions({ agent: fileURLToPath(import.meta.url), agentName: workerSettings().agentName }));
}
