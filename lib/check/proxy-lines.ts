/**
 * Reading what a proxy under check wrote: its `proxy/successor` envelopes (toward its successor)
 * and its plain messages (toward its client), and comparing JSON values.
 *
 * @packageDocumentation
 */
import { unwrapSuccessor } from '../chain/successor';
import type { JsonValue } from '../jsonrpc/message';
import { isSuccessorEnvelope } from '../jsonrpc/protocol';
import type { AgentProcess } from './agent-process';
import type { CheckContext } from './context';
import type { WireLine } from './wire-line';

/** The inner message of a line holding a `proxy/successor` envelope (undefined for any other line). */
export function innerOf(line: WireLine): { method: string; params: JsonValue | undefined } | undefined {
  const method = line.message?.method;
  if (typeof method !== 'string' || !isSuccessorEnvelope(method)) return undefined;
  const inner = unwrapSuccessor(line.message?.params);
  return inner && { method: inner.method, params: inner.params as JsonValue | undefined };
}

/** Whether a line is an envelope request (`hasId`) or notification carrying `method`, whose inner params `matches`. */
export function isEnvelopeOf(method: string, hasId: boolean, matches: (params: JsonValue | undefined) => boolean = () => true) {
  return (line: WireLine): boolean => {
    const inner = innerOf(line);
    return inner?.method === method && (line.message?.id !== undefined) === hasId && matches(inner.params);
  };
}

/** Whether a line is a plain request (`hasId`) or notification of `method`, whose params `matches`. */
export function isPlainOf(method: string, hasId: boolean, matches: (params: JsonValue | undefined) => boolean = () => true) {
  return (line: WireLine): boolean =>
    line.message?.method === method && (line.message.id !== undefined) === hasId && matches(line.message.params as JsonValue | undefined);
}

/** Whether two JSON values are equal (objects whatever the order of their members). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  return (
    keysA.length === keysB.length &&
    keysA.every((key) => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
  );
}

/** The first line since `lines[from]` that `matches`, waiting up to the run's timeout. */
export function awaitLine(
  context: CheckContext,
  agent: AgentProcess,
  from: number,
  matches: (line: WireLine) => boolean,
): Promise<WireLine | undefined> {
  return agent.lineAfter(from, matches, context.settings.timeoutMs);
}
