/**
 * The batteries of `acp-wire check`: every check of an agent and of a proxy, group by group, in
 * the order they run.
 *
 * @packageDocumentation
 */
import { FRAMING_CHECKS } from './framing-checks';
import { INITIALIZE_CHECKS } from './initialize-checks';
import { JSON_RPC_CHECKS } from './json-rpc-checks';
import { LIFECYCLE_CHECKS } from './lifecycle-checks';
import type { Check } from './check';
import { PROXY_ENVELOPE_CHECKS } from './proxy-checks';
import { PROXY_HOP_CHECKS } from './proxy-hop-checks';
import type { RemoteContext } from './remote-context';
import { REMOTE_ACCESS_CHECKS } from './remote-access-checks';
import { REMOTE_CONNECTION_CHECKS } from './remote-checks';
import { SESSION_CHECKS } from './sessions-checks';

/** Every check of an agent, in the order of `CHECK_GROUPS`. */
export const CHECKS: readonly Check[] = [
  ...FRAMING_CHECKS,
  ...JSON_RPC_CHECKS,
  ...INITIALIZE_CHECKS,
  ...SESSION_CHECKS,
  ...LIFECYCLE_CHECKS,
];

/** Every check of a proxy (`--proxy`). */
export const PROXY_CHECKS: readonly Check[] = [...PROXY_ENVELOPE_CHECKS, ...PROXY_HOP_CHECKS];

/** Every check of a remote server (`--url`). */
export const REMOTE_CHECKS: readonly Check<RemoteContext>[] = [...REMOTE_CONNECTION_CHECKS, ...REMOTE_ACCESS_CHECKS];

/** Every check of every battery, in report order. */
export const ALL_CHECKS: readonly Pick<Check, 'id' | 'group'>[] = [...CHECKS, ...PROXY_CHECKS, ...REMOTE_CHECKS];
