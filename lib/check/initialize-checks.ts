/**
 * The initialize checks: version negotiation (offers of 1, 2 and 99, each to a new agent), the
 * answer against the official schema, a second `initialize`.
 *
 * @packageDocumentation
 */
import { isJsonObject, type JsonObject } from '../jsonrpc/message';
import type { CheckContext } from './context';
import { RULES } from './rules';
import type { Check } from './check';
import { type CheckOutcome, fail, notApplicable, pass, withEvidence } from './outcome';
import { shortText, type WireLine } from './wire-line';

/** Where the answer to each offer is kept for the later checks. */
const answerKey = (offer: number): string => `initialize:${offer}`;

/** The `result` of an `initialize` answer, or a failure naming the error. */
function resultOf(answer: WireLine): JsonObject | CheckOutcome {
  const result = answer.message?.result;
  if (isJsonObject(result)) return result;
  return withEvidence(fail(`initialize was not answered with a result: ${shortText(answer.text)}`), answer);
}

/** Offers `offer` to a new agent; returns the version it answered, or a failure. */
async function negotiate(context: CheckContext, offer: number): Promise<number | CheckOutcome> {
  const agent = context.spawn();
  const answer = await context.initialize(agent, offer);
  context.memo.set(answerKey(offer), answer);
  const result = resultOf(answer);
  if ('status' in result) return result as CheckOutcome;
  const version = result.protocolVersion;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    return fail(
      `the offer of ${offer} was answered with protocolVersion ${JSON.stringify(version)}, not a version: ${shortText(answer.text)}`,
    );
  }
  return version;
}

/**
 * The agent's latest version, as it answers an offer of 99 (a version no agent speaks) on a new
 * process: what it must answer any offer of a version it does not speak. Kept for later checks.
 */
async function latestVersion(context: CheckContext): Promise<number | CheckOutcome> {
  const known = context.memo.get(LATEST_KEY) as number | CheckOutcome | undefined;
  if (known !== undefined) return known;
  const latest = await negotiate(context, 99);
  context.memo.set(LATEST_KEY, latest);
  return latest;
}

const LATEST_KEY = 'initialize:latest';

function offerCheck(offer: 1 | 2): Check {
  return {
    id: `initialize.offer-${offer}`,
    group: 'initialize',
    title: `an offer of version ${offer} is answered ${offer}, or the latest version the agent speaks`,
    rule: RULES.versionNegotiation,
    async run(context) {
      const version = await negotiate(context, offer);
      if (typeof version !== 'number') return version;
      if (version === offer) return pass(`answered ${version}`);
      // Not the version offered: the agent does not speak it, and must answer its latest.
      const latest = await latestVersion(context);
      if (typeof latest !== 'number') return notApplicable(`its latest version is unknown: the offer of 99 failed (${latest.message})`);
      if (version === latest) return pass(`answered ${version}: it does not speak ${offer}, and ${version} is its latest`);
      return fail(
        `the offer of ${offer} was answered with ${version}, neither ${offer} nor its latest version (${latest}, its answer to an offer of 99)`,
      );
    },
  };
}

const offer99: Check = {
  id: 'initialize.offer-99',
  group: 'initialize',
  title: 'an offer of version 99 is answered with a version below 99 (the latest the agent speaks)',
  rule: RULES.versionNegotiation,
  async run(context) {
    const version = await latestVersion(context);
    if (typeof version !== 'number') return version;
    if (version >= 99) return fail(`the offer of 99 was answered with ${version}: a version no agent speaks`);
    const answer2 = context.memo.get(answerKey(2)) as WireLine | undefined;
    const spoken = (answer2?.message?.result as JsonObject | undefined)?.protocolVersion;
    if (typeof spoken === 'number' && version < spoken) {
      return fail(`the offer of 99 was answered with ${version}, below ${spoken} (its answer to an offer of 2): not its latest`);
    }
    return pass(`answered ${version}`);
  },
};

const capabilities: Check = {
  id: 'initialize.capabilities',
  group: 'initialize',
  title: 'the answer to initialize (capabilities, auth methods, info) is valid against the official schema',
  rule: RULES.stdoutOnlyMessages,
  async run(context) {
    const answer = context.memo.get(answerKey(2)) as WireLine | undefined;
    if (!answer) return notApplicable('initialize.offer-2 did not run');
    const result = resultOf(answer);
    if ('status' in result) return result as CheckOutcome;
    const version = result.protocolVersion;
    if (version !== 1 && version !== 2) return notApplicable(`no official schema for version ${JSON.stringify(version)}`);
    const errors = context.schema.errors('InitializeResponse', result, version);
    if (errors.length === 0) return pass(`v${version} InitializeResponse`);
    return withEvidence(fail(`${errors.length} schema error(s): ${errors.slice(0, 3).join('; ')}`), answer);
  },
};

const secondInitialize: Check = {
  id: 'initialize.second',
  group: 'initialize',
  title: 'a second initialize gets one answer, and the agent still serves',
  rule: RULES.alwaysAnswered,
  async run(context) {
    const agent = await context.agent();
    const answer = await context.initialize(agent, 2);
    await context.expectServing(agent, 'a second initialize');
    const error = answer.message?.error;
    if (isJsonObject(error)) return pass(`refused with ${String(error.code)} ${String(error.message)}`);
    return pass('answered with a result');
  },
};

/** The initialize group. */
export const INITIALIZE_CHECKS: readonly Check[] = [offerCheck(1), offerCheck(2), offer99, capabilities, secondInitialize];
