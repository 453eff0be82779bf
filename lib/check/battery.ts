/**
 * The battery of `acp-wire check`: every check, group by group, in the order they run.
 *
 * @packageDocumentation
 */
import { FRAMING_CHECKS } from './framing-checks';
import { INITIALIZE_CHECKS } from './initialize-checks';
import { JSON_RPC_CHECKS } from './json-rpc-checks';
import { LIFECYCLE_CHECKS } from './lifecycle-checks';
import { SESSION_CHECKS } from './sessions-checks';
import type { Check } from './outcome';

/** Every check, in the order of `CHECK_GROUPS`. */
export const CHECKS: readonly Check[] = [
  ...FRAMING_CHECKS,
  ...JSON_RPC_CHECKS,
  ...INITIALIZE_CHECKS,
  ...SESSION_CHECKS,
  ...LIFECYCLE_CHECKS,
];
