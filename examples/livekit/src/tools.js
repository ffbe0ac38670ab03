// The agent's tools (llm_config.tools) as LiveKit function tools, with the meaning
// conventions §21 gives them: the same descriptions and argument schemas as voiceapi's
// own conversation engine, so a version behaves alike in a text test and on the phone.
//
// What touches the call (hang up, transfer, keypad, speech) goes through `controls`, which
// the worker implements with LiveKit and SIP, and a test with plain records.

import { llm } from '@livekit/agents';
import { FUNCTION_KEY_HEADER, FunctionKeys } from './function_key.js';

/** How long a custom function may take when its tool sets no timeout. */
export const DEFAULT_FUNCTION_TIMEOUT_MS = 10_000;
/** How much of a custom function's answer the model reads. */
export const MAX_FUNCTION_ANSWER = 16 * 1024;

const defaultDescriptions = {
  end_call: 'End the call once the conversation is over, after saying goodbye.',
  transfer_call: 'Transfer the call to another person or team.',
  press_ivr: 'Press keys on the phone keypad to navigate an automated phone menu.',
  send_sms: 'Send a text message to the caller.',
  extract_dynamic_variable: 'Record information the caller gave.',
  custom_function: 'Call an external function.',
};

/** What the model reads about a tool: its description, else what its type does. */
export function toolDescription(t) {
  let d = t.description || defaultDescriptions[t.type] || '';
  if (t.type === 'transfer_call') {
    d += ' Destinations:' + (t.phone_directory ?? []).map((e) => `\n- ${e.name}: ${e.description}`).join('');
  } else if (t.type === 'send_sms' && t.content_type === 'prompt') {
    d += ' Write the message as follows: ' + t.content;
  }
  return d;
}

/** The JSON schema of a tool's arguments. */
export function toolSchema(t) {
  const props = {};
  const required = [];
  switch (t.type) {
    case 'transfer_call':
      props.destination = {
        type: 'string',
        enum: (t.phone_directory ?? []).map((e) => e.name),
        description: 'The name of the destination to transfer to.',
      };
      required.push('destination');
      break;
    case 'press_ivr':
      props.digits = { type: 'string', pattern: '^[0-9*#]{1,20}$', description: 'The keys to press: digits, * and #.' };
      required.push('digits');
      break;
    case 'send_sms':
      if (t.content_type === 'prompt') {
        props.message = { type: 'string', minLength: 1, description: 'The text message to send.' };
        required.push('message');
      }
      break;
    case 'extract_dynamic_variable':
      for (const v of t.variables ?? []) props[v.name] = variableSchema(v);
      break;
    case 'custom_function': {
      const own = customSchema(t);
      if (own) return own;
      break;
    }
  }
  const schema = { type: 'object', properties: props, additionalProperties: false };
  if (required.length) schema.required = required;
  return schema;
}

function variableSchema(v) {
  const s = { description: v.description };
  if (v.type === 'number' || v.type === 'boolean') s.type = v.type;
  else if (v.type === 'enum') Object.assign(s, { type: 'string', enum: v.choices ?? [] });
  else s.type = 'string';
  return s;
}

function customSchema(t) {
  if (!t.custom_function_parameters?.trim()) return null;
  try {
    const s = JSON.parse(t.custom_function_parameters);
    if (s === null || typeof s !== 'object' || Array.isArray(s)) return null;
    return { type: 'object', ...s }; // providers want an object
  } catch {
    return null;
  }
}

/**
 * The function tools of a configuration, keyed by name (null items skipped).
 * @param {object[]} tools llm_config.tools
 * @param {object} call the call's state: {id, variables, end?, transfer?}, changed by the
 *   tools; id, the voiceapi call's, scopes the custom functions' Idempotency-Keys
 * @param {object} controls {hangUp(reason), transfer(entry, tool), pressKeys(digits), say?(text)}
 */
export function functionTools(tools, call, controls) {
  const out = {};
  const keys = new FunctionKeys(call.id);
  for (const t of tools ?? []) {
    if (!t) continue;
    out[t.name] = llm.tool({
      description: toolDescription(t),
      parameters: toolSchema(t),
      execute: (args, { ctx }) => runTool(t, args ?? {}, { call, controls, ctx, keys }),
    });
  }
  return out;
}

async function runTool(t, args, { call, controls, ctx, keys }) {
  if (t.speak_during_execution && t.speak_during_execution_options?.length && controls.say) {
    controls.say(t.speak_during_execution_options[0]);
  }
  switch (t.type) {
    case 'end_call':
      call.end = 'agent_hangup';
      // After the agent's goodbye: the turn's speech ends once the reply to this tool's
      // result is spoken.
      afterTurn(ctx, () => controls.hangUp('agent_hangup'));
      return { ended: true };
    case 'transfer_call': {
      const entry = (t.phone_directory ?? []).find((e) => e.name === args.destination);
      if (!entry) return { error: `There is no destination named ${JSON.stringify(args.destination)}.` };
      call.end = 'call_transfer';
      call.transfer = entry;
      afterTurn(ctx, () => controls.transfer(entry, t));
      return { transferred_to: { name: entry.name, phone_number: entry.phone_number, transfer_type: entry.transfer_type } };
    }
    case 'press_ivr':
      await controls.pressKeys(args.digits);
      return { pressed: args.digits };
    case 'send_sms': {
      // LiveKit carries no text messages: the request is recorded in the transcript.
      const message = t.content_type === 'prompt' ? args.message : t.content;
      return { recorded: true, message, note: 'this runtime sends no text messages' };
    }
    case 'extract_dynamic_variable': {
      const problem = checkVariables(t.variables ?? [], args);
      if (problem) return { error: problem };
      Object.assign(call.variables, args);
      return { set: args };
    }
    case 'custom_function':
      return callFunction(t, args, call, keys.next(t.name, ctx));
    default:
      return { error: `The tool ${JSON.stringify(t.name)} has a type this runtime cannot run (${t.type}).` };
  }
}

function afterTurn(ctx, fn) {
  if (ctx?.speechHandle) ctx.speechHandle.addDoneCallback(() => fn());
  else queueMicrotask(fn);
}

function checkVariables(variables, args) {
  for (const [name, value] of Object.entries(args)) {
    const v = variables.find((x) => x.name === name);
    if (!v) return `There is no variable named ${JSON.stringify(name)}.`;
    const want = v.type === 'number' || v.type === 'boolean' ? v.type : 'string';
    if (typeof value !== want) return `The variable ${name} must be a ${want}.`;
    if (v.type === 'enum' && !(v.choices ?? []).includes(value)) {
      return `The variable ${name} must be one of ${(v.choices ?? []).join(', ')}.`;
    }
  }
  return null;
}

/**
 * Performs a custom function's request: its method, endpoint, headers ("Name: value") and
 * query ("key=value") as voiceapi substituted them, the arguments as a JSON body (as query
 * parameters for GET and DELETE), and key as its Idempotency-Key, within the tool's
 * timeout. The model reads the status and the answer's first 16 KiB; a JSON object answer
 * sets the variables named in custom_function_variables.
 */
export async function callFunction(t, args, call, key) {
  const timeoutMs = t.timeout > 0 ? t.timeout : DEFAULT_FUNCTION_TIMEOUT_MS;
  let req;
  try {
    req = functionRequest(t, args, key);
  } catch (err) {
    return { error: `The function ${JSON.stringify(t.name)} cannot be called: ${err.message}.` };
  }
  let res;
  let body;
  try {
    res = await fetch(req.url, { ...req.init, signal: AbortSignal.timeout(timeoutMs) });
    body = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    if (err.name === 'TimeoutError') {
      return { error: `The function ${JSON.stringify(t.name)} did not answer within ${timeoutMs} ms.` };
    }
    return { error: `The function ${JSON.stringify(t.name)} could not be reached: ${err.cause?.message ?? err.message}.` };
  }
  const truncated = body.length > MAX_FUNCTION_ANSWER;
  const text = body.subarray(0, MAX_FUNCTION_ANSWER).toString('utf8');
  if (res.ok && t.custom_function_variables?.length) {
    try {
      const obj = JSON.parse(text);
      for (const name of t.custom_function_variables) {
        if (['string', 'number', 'boolean'].includes(typeof obj?.[name])) call.variables[name] = obj[name];
      }
    } catch {
      // Not JSON: nothing to set.
    }
  }
  return { status: res.status, body: text, truncated };
}

/**
 * The request of a custom function. key (FunctionKeys) is sent as Idempotency-Key with
 * every method, unless custom_function_headers names that header: the tool's own value
 * replaces it, as in voiceapi's engine.
 */
export function functionRequest(t, args, key) {
  const url = new URL(t.api_endpoint);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`its api_endpoint is not an http(s) URL`);
  (t.custom_function_query ?? []).forEach((item, i) => {
    const at = item.indexOf('=');
    if (at <= 0) throw new Error(`custom_function_query item ${i} is not key=value`);
    url.searchParams.append(item.slice(0, at), item.slice(at + 1));
  });
  const method = t.http_method || 'POST';
  const headers = {};
  if (key) headers[FUNCTION_KEY_HEADER] = key;
  let body;
  if (method === 'GET' || method === 'DELETE') {
    for (const [k, v] of Object.entries(args)) {
      url.searchParams.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    }
  } else {
    body = JSON.stringify(args);
    headers['Content-Type'] = 'application/json';
  }
  (t.custom_function_headers ?? []).forEach((item, i) => {
    const at = item.indexOf(':');
    if (at <= 0 || !item.slice(0, at).trim()) throw new Error(`custom_function_headers item ${i} is not "Name: value"`);
    const name = item.slice(0, at).trim();
    // Header names are case-insensitive: the tool's own spelling replaces ours, once.
    for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k];
    headers[name] = item.slice(at + 1).trim();
  });
  return { url: url.toString(), init: { method, headers, body } };
}
