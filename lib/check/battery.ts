/**
 * The battery of `acp-wire check`: every check, group by group, in the order they run.
 *
 * @packageDocumentation
 */
import { FRAMING_CHECKS } from './checks/framing';
import { INITIALIZE_CHECKS } from './checks/initialize';
import { JSON_RPC_CHECKS } from './checks/json-rpc';
import { LIFECYCLE_CHECKS } from './checks/lifecycle';
import { SESSION_CHECKS } from './checks/sessions';
import type { Check } from './outcome';

/** Every check, in the order of `CHECK_GROUPS`. */
export const CHECKS: readonly Check[] = [...FRAMING_CHECKS, ...JSON_RPC_CHECKS, ...INITIALIZE_CHECKS, ...SESSION_CHECKS, ...LIFECYCLE_CHECKS];
