/**
 * `acp-wire check --model-stub` against the real agents (codex-acp, claude-code-acp,
 * claude-agent-acp) with their fake model servers: the report names what each one breaks, with
 * the agent's own words, what it does that its rule allows (info), and nothing else fails.
 */
import { expect } from 'chai';
import type { CheckReport } from '../../lib/check/outcome';
import { checkAgent } from '../../lib/check/run';
import { useBuild } from '../helpers/processes';
import { REAL_PEERS, installedVersion, requireRealPeers } from '../helpers/real-peers';

/** One real agent, the checks it fails and those reported as info, with what each message must say. */
interface Expected {
  readonly name: string;
  readonly entry: string;
  readonly failures: Readonly<Record<string, RegExp>>;
  readonly infos: Readonly<Record<string, RegExp>>;
}

/** Shared by the three: each is a JSON-RPC peer that does not exit when its stdin ends. */
const STILL_RUNNING = /^still running 3000 ms after its stdin ended$/;
/** The Claude agents (on the ACP TypeScript SDK) log a malformed line on stderr and drop it. */
const MALFORMED_DROPPED = /^a malformed line got no answer \(a request sent after it did\); it still serves$/;
/** The Claude agents parse ids as doubles. */
const ROUNDED_ID =
  /^the id 9007199254740993 came back as 9007199254740992: \{"jsonrpc":"2\.0","id":9007199254740992,"error":\{"code":-32601,/;
/** The Claude agents die of the EPIPE of writing to a client that has gone (an unhandled 'error' event). */
const EPIPE_CRASH = /^it ended with an error when its client went away mid-turn: exit code 1; stderr: Error: write EPIPE$/;
/** The Claude agents ignore a `$/cancel_request` of a prompt (allowed: info): the turn runs on until `session/cancel`. */
const CANCEL_REQUEST_IGNORED = {
  'sessions.cancel-request': /^ignored: no answer to the prompt within 3000 ms; session\/cancel then ended it cancelled$/,
};

const AGENTS: readonly Expected[] = [
  {
    name: '@zed-industries/codex-acp',
    entry: REAL_PEERS.codexAcp,
    failures: {
      'framing.malformed-line':
        /^the -32700 answer has no id \(JSON-RPC: "id": null\): \{"jsonrpc":"2\.0","error":\{"code":-32700,"message":"Parse error",.*; it still serves$/,
      'json-rpc.id-echo': /^the id -1 came back as \(none\): \{"jsonrpc":"2\.0","error":\{"code":-32700,"message":"Parse error"/,
      'json-rpc.unknown-notification':
        /^a notification was answered: \{"jsonrpc":"2\.0","error":\{"code":-32601,"message":"Method not found","data":"acp-wire\/check-unknown-notification"\}\}$/,
      'json-rpc.dollar-notification':
        /^a notification was answered: \{"jsonrpc":"2\.0","error":\{"code":-32601,"message":"Method not found","data":"\$\/acp-wire-check-unknown"\}\}$/,
      'sessions.cancel-request':
        /^the notification got the answer \{"jsonrpc":"2\.0","error":\{"code":-32601,"message":"Method not found","data":"\$\/cancel_request"\}\}; and ignored: no answer to the prompt within 3000 ms; session\/cancel then ended it cancelled$/,
      'lifecycle.stdin-end': STILL_RUNNING,
      // The launcher dies of SIGTERM; the native binary it started goes on running.
      'lifecycle.no-leftover':
        /^3000 ms after the agent exited \(after SIGTERM \(to the agent alone\)\), its group still runs \d+ \(codex-acp\)$/,
      // Its main returns the broken pipe as an error: exit 1, with a backtrace on stderr.
      'lifecycle.client-gone':
        /^it ended with an error when its client went away mid-turn: exit code 1; stderr: Error: ACP error: Internal error: \{ … "data": "Broken pipe \(os error 32\)"$/,
    },
    infos: {},
  },
  {
    name: '@zed-industries/claude-code-acp',
    entry: REAL_PEERS.claudeCodeAcp,
    failures: {
      'framing.malformed-line': MALFORMED_DROPPED,
      'json-rpc.id-echo': ROUNDED_ID,
      'lifecycle.stdin-end': STILL_RUNNING,
      'lifecycle.client-gone': EPIPE_CRASH,
    },
    infos: CANCEL_REQUEST_IGNORED,
  },
  {
    name: '@zed-industries/claude-agent-acp',
    entry: REAL_PEERS.claudeAgentAcp,
    failures: {
      'framing.malformed-line': MALFORMED_DROPPED,
      'json-rpc.id-echo': ROUNDED_ID,
      // One turn behind: the prompt after a cancelled one ends at once, with no text; the next streams both answers.
      'sessions.after-cancel':
        /^the first prompt after a cancelled turn \(asking for apricot\) ended end_turn after \d+ ms with no text; the second \(blueberry\) ended end_turn after \d+ ms with the text "echo: Reply with the single word apricot\..*\(one turn behind: the second's text holds the first's apricot\)$/,
      'lifecycle.stdin-end': STILL_RUNNING,
      'lifecycle.client-gone': EPIPE_CRASH,
    },
    infos: CANCEL_REQUEST_IGNORED,
  },
];

for (const agent of AGENTS) {
  describe(`acp-wire check --model-stub: ${agent.name} ${installedVersion(agent.name)} (real agent)`, function () {
    this.timeout(240_000);
    useBuild();
    let report: CheckReport;

    before(async function () {
      this.timeout(240_000);
      requireRealPeers();
      report = await checkAgent([process.execPath, agent.entry], { modelStub: true });
    });

    it('runs every check, fails exactly these and reports these as info (no check is n/a: the fake model runs its turns)', () => {
      const notPassing = report.results.filter((result) => result.status !== 'pass').map((result) => `${result.status} ${result.id}`);
      const expected = report.results.flatMap((result) => {
        if (Object.hasOwn(agent.failures, result.id)) return [`fail ${result.id}`];
        return Object.hasOwn(agent.infos, result.id) ? [`info ${result.id}`] : [];
      });
      const messages = report.results.map((result) => `${result.status} ${result.id}: ${result.message}`).join('\n');
      expect(notPassing).to.deep.equal(expected, messages);
      expect(report.results.map((result) => result.id)).to.include.members([...Object.keys(agent.failures), ...Object.keys(agent.infos)]);
    });

    for (const [id, message] of Object.entries(agent.failures)) {
      it(`${id} fails with what the agent did`, () => {
        const result = report.results.find((each) => each.id === id);
        expect(result?.status).to.equal('fail');
        expect(result?.message).to.match(message);
      });
    }

    for (const [id, message] of Object.entries(agent.infos)) {
      it(`${id} is info (allowed) with what the agent did`, () => {
        const result = report.results.find((each) => each.id === id);
        expect(result?.status).to.equal('info');
        expect(result?.message).to.match(message);
      });
    }

    it('passes session/cancel: the turn ends cancelled', () => {
      expect(report.results.find((each) => each.id === 'sessions.session-cancel')).to.include({ status: 'pass' });
    });
  });
}
