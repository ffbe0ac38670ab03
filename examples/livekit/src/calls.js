// Answering and placing calls: the call-start request for each direction, and the two
// ways a session starts from a call-start answer. Nothing here depends on a LiveKit room:
// the worker passes its room and its dialer in, the tests run the same paths in text.

import { buildCallSession } from './session.js';

/**
 * The call-start request of an inbound SIP call, from the attributes LiveKit gives the
 * caller's participant: sip.trunkPhoneNumber is the number dialed, sip.phoneNumber the
 * caller (absent when withheld).
 */
export function inboundRequest(attributes, { roomName } = {}) {
  const toNumber = attributes['sip.trunkPhoneNumber'];
  if (!toNumber) throw new Error('the participant has no sip.trunkPhoneNumber: not a SIP call');
  const metadata = {};
  if (attributes['sip.callID']) metadata.sip_call_id = attributes['sip.callID'];
  if (roomName) metadata.livekit_room = roomName;
  return {
    direction: 'inbound',
    to_number: toNumber,
    ...(attributes['sip.phoneNumber'] ? { from_number: attributes['sip.phoneNumber'] } : {}),
    metadata,
  };
}

/**
 * The call-start request of an outbound call, from a dispatch's metadata:
 * {to_number, agent_id?, from_number?, variables?, metadata?}. voiceapi checks each member.
 */
export function outboundRequest(dispatch) {
  const { to_number: toNumber, agent_id: agentId, from_number: fromNumber, variables, metadata } = dispatch;
  if (!toNumber) throw new Error('an outbound dispatch needs to_number');
  return {
    direction: 'outbound',
    to_number: toNumber,
    ...(agentId ? { agent_id: agentId } : {}),
    ...(fromNumber ? { from_number: fromNumber } : {}),
    ...(variables ? { variables } : {}),
    ...(metadata ? { metadata } : {}),
  };
}

/**
 * Answers an inbound call: asks voiceapi what it runs, builds the session and starts it
 * (in the room, or in text without one), the call reported ongoing. The caller then
 * greets when the configuration says the agent speaks first.
 * @param {object} request inboundRequest's result
 * @param {object} deps buildCallSession's deps, and {idempotencyKey?, room?, onMaxDuration?}
 */
export async function startInboundCall(request, deps) {
  const answer = await deps.voiceapi.startCall(request, { idempotencyKey: deps.idempotencyKey });
  const run = await buildCallSession(answer, deps);
  await startOrFail(run, deps);
  return run;
}

// Starts the session; a session that cannot start ends the call as failed.
async function startOrFail(run, deps) {
  try {
    await run.start({ room: deps.room, onMaxDuration: deps.onMaxDuration });
  } catch (err) {
    await run.report.end({ status: 'failed', reason: 'runtime_error' });
    await run.session.close().catch(() => {});
    throw err;
  }
}

/**
 * Places an outbound call from a call-start answer, however it was obtained (a dispatch
 * that asked POST /calls/start, or a campaign's dial task that carries the answer): the
 * session is built first, so a configuration this example cannot run is refused before
 * anyone's phone rings; then `dial` rings answer.call.to_number and resolves once the
 * callee picks up; then the session starts. A dial that fails ends the call as failed,
 * with the dial's reason (no_answer, busy, dial_failed), and rethrows.
 *
 * @param {{call: object, agent: object}} answer
 * @param {object} deps buildCallSession's deps, and
 *   {dial: (answer) => Promise<void>, room?, onMaxDuration?}
 * @returns {Promise<import('./session.js').CallSession>}
 */
export async function startOutboundCall(answer, deps) {
  const run = await buildCallSession(answer, deps);
  try {
    await deps.dial(answer);
  } catch (err) {
    await run.report.end({ status: 'failed', reason: err.reason ?? 'dial_failed' });
    await run.session.close().catch(() => {});
    throw err;
  }
  await startOrFail(run, deps);
  return run;
}

/** A dial that did not reach the callee, with the disconnection_reason to record. */
export class DialError extends Error {
  constructor(message, reason = 'dial_failed') {
    super(message);
    this.name = 'DialError';
    this.reason = reason;
  }
}
