/**
 * The uplink's commands, `{prefix}/cmd/plan`, `{prefix}/cmd/limits` and `{prefix}/cmd/resync`
 * (docs/mqtt-contract.md "Commands"): the rules they share (the requestId, the retain flag, the
 * answer's envelope and topic), each command's own answer coming from plan-command.ts,
 * limits-command.ts and resync.ts.
 */
import type { IPublishPacket } from 'mqtt';
import { PAYLOAD_VERSION, TOPIC } from './topics.js';

/** One rule for every command: what a requestId may be, and an answer echoes only such a one. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;
export const REQUEST_ID_RULE = 'requestId must be a string of 1 to 100 letters, digits or . _ : -';

/** The command's requestId if it has a valid one, else null (what the answer echoes). */
export function requestIdOf(body: unknown): string | null {
  if (body === null || typeof body !== 'object') return null;
  const id = (body as { requestId?: unknown }).requestId;
  return typeof id === 'string' && REQUEST_ID.test(id) ? id : null;
}

/** A JSON object without a valid requestId, answered INVALID_REQUEST_ID; another body is left to the command's shape check. */
export function lacksRequestId(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && requestIdOf(body) === null;
}

/** Each command and its response topic: one table, so a new command is one row. */
const COMMANDS = {
  plan: { topic: TOPIC.plan, response: TOPIC.planResponse },
  limits: { topic: TOPIC.limits, response: TOPIC.limitsResponse },
  resync: { topic: TOPIC.resync, response: TOPIC.resyncResponse },
} as const;

export type CommandKind = keyof typeof COMMANDS;

/** Which command a topic is, given how the site's prefix makes a topic of a TOPIC entry. */
export function commandKindOf(topic: string, topicOf: (t: string) => string): CommandKind | null {
  for (const [kind, c] of Object.entries(COMMANDS)) if (topicOf(c.topic) === topic) return kind as CommandKind;
  return null;
}

export type CommandAnswer = { requestId: string | null; status: 'accepted' | 'error'; code?: string; message?: string };

export interface CommandReply {
  /** the MQTT 5 Response Topic when the command gave a usable one, else the command's own response topic */
  topic: string;
  /** the JSON answer: v and siteId first, then the command's answer */
  payload: string;
  correlationData?: Buffer;
}

/**
 * A retained copy of a command is refused, never acted on: the broker hands it to the gateway at
 * every (re)connection and start, long after it was meant (an old plan put back, a resync queued
 * again). The gateway sees the flag on a retained copy delivered at subscription (MQTT 3.1.1 and
 * 5) and, on MQTT 5 where it subscribes with Retain As Published, on a command published with the
 * flag while it is connected. The answer keeps a valid requestId so the sender can match it.
 */
export function retainedRefusal(payload: Buffer): CommandAnswer {
  let body: unknown = null;
  try {
    if (payload.length <= 100_000) body = JSON.parse(payload.toString('utf8'));
  } catch {
    // no requestId to echo
  }
  return {
    requestId: requestIdOf(body),
    status: 'error',
    code: 'RETAINED_COMMAND',
    message:
      'a retained command is not acted on (it would run again at every reconnection); publish it without the retain flag, and clear the retained copy with an empty retained message',
  };
}

/** Where and what the gateway answers to one command on `prefix`. */
export function commandReply(
  prefix: string,
  siteId: string,
  kind: CommandKind,
  packet: IPublishPacket,
  answer: CommandAnswer,
): CommandReply {
  const props = packet.properties;
  const own = `${prefix}/${COMMANDS[kind].response}`;
  return {
    topic: validResponseTopic(props?.responseTopic) ?? own,
    payload: JSON.stringify({ v: PAYLOAD_VERSION, siteId, ...answer }),
    ...(props?.correlationData ? { correlationData: props.correlationData } : {}),
  };
}

/** An MQTT 5 response topic from a command, if it is one we may publish to (no wildcards). */
function validResponseTopic(t: string | undefined): string | undefined {
  if (t === undefined || t.length === 0 || t.length > 512 || /[+#\u0000]/.test(t)) return undefined;
  return t;
}
