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
import type { Check } from './outcome';
import { PROXY_ENVELOPE_CHECKS } from './proxy-checks';
import { PROXY_HOP_CHECKS } from './proxy-hop-checks';
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

/** Every check of every battery, in report order. */
export const ALL_CHECKS: readonly Check[] = [...CHECKS, ...PROXY_CHECKS];
