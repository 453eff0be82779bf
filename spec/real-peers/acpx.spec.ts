/**
 * acpx, a real ACP v1 command-line client, against the conformance agent: directly, and through
 * `acp-wire conduct`. acpx sends no `_meta`, so the turns it cancels run behind a pacing proxy
 * (spec/fixtures/pacing-proxy.ts) that gives each prompt `_meta.workMs`.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LineReader } from '../helpers/lines';
import { stillRunningAfter } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, PASSTHROUGH_PROXY, ROOT, useBuild } from '../helpers/processes';
import {
  REAL_PEERS,
  commandLine,
  installedVersion,
  makeTempHome,
  peerReader,
  processesWithHome,
  requireRealPeers,
  type TempHome,
} from '../helpers/real-peers';

const PROMPT = 'one two three four five six';

/** The running processes of a process group (Linux `/proc`; zombies do not count). */
function processGroupMembers(pgid: number): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(group) === pgid && state !== 'Z' ? [Number(entry)] : [];
    } catch {
      return []; // ended while we looked
    }
  });
}

/** A process's command line, its words joined by spaces ('' once it has ended). */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}
/** What the conformance agent answers to {@link PROMPT}. */
const REPLY = `echo: ${PROMPT}`;
/** What acpx writes on stderr when a message fails its schema (it then drops the message). */
const SCHEMA_REJECTION = /Error handling (notification|request|response)|Invalid params|-32602/;

const AGENT = commandLine('node', CONFORMANCE_AGENT);
const PASSTHROUGH = commandLine('node', PASSTHROUGH_PROXY);
const PACING = commandLine(
  'node',
  '-r',
  require.resolve('ts-node/register/transpile-only'),
  join(ROOT, 'spec', 'fixtures', 'pacing-proxy.ts'),
  '60000',
);

/** The agent commands acpx is pointed at (`--agent`). */
const AGENTS = {
  direct: AGENT,
  conducted: commandLine('node', CLI, 'conduct', PASSTHROUGH, PASSTHROUGH, AGENT),
  /** A turn that takes a minute, unless cancelled. */
  slow: commandLine('node', CLI, 'conduct', PACING, AGENT),
} as const;

interface Acpx {
  readonly child: ChildProcess;
  readonly stdout: LineReader;
  readonly stderr: LineReader;
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/**
 * Runs `acpx --agent <agent> <args…>` in `home` (acpx keeps its sessions under `$HOME/.acpx`).
 * With `detached`, acpx leads a process group of its own, as a terminal's foreground job does.
 */
function acpx(home: TempHome, agent: string, args: readonly string[], options: { detached?: boolean } = {}): Acpx {
  const child = spawn(process.execPath, [REAL_PEERS.acpx, '--agent', agent, ...args], {
    cwd: home.path,
    // The pacing proxy runs under ts-node, from acpx's working directory: point it at the project.
    env: home.env({ TS_NODE_PROJECT: join(ROOT, 'tsconfig.json') }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached === true,
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, stdout: peerReader(child.stdout!, 'acpx stdout'), stderr: peerReader(child.stderr!, 'acpx stderr'), exited };
}

describe(`acpx ${installedVersion('acpx')} (real ACP v1 client) against the conformance agent`, function () {
  this.timeout(60_000);
  useBuild();
  let home: TempHome;

  beforeEach(async () => {
    requireRealPeers();
    home = await makeTempHome('acpx');
  });

  afterEach(async () => {
    // A failed test may leave some of what it started: end it (by pid: all ours, started with this HOME).
    for (const pid of processesWithHome(home)) process.kill(pid, 'SIGKILL');
    await home.remove();
  });

  /** Whatever acpx started (its queue owner, the agent chain) ends with it, or with its session. */
  async function expectNothingLeft(): Promise<void> {
    expect(await stillRunningAfter(processesWithHome(home), 5000), 'processes started with this HOME still running').to.deep.equal([]);
  }

  for (const [route, agent] of [
    ['directly', AGENTS.direct],
    ['through acp-wire conduct with two passthrough proxies', AGENTS.conducted],
  ] as const) {
    it(`exec prints the whole turn and [done] end_turn, ${route}`, async () => {
      const run = acpx(home, agent, ['exec', PROMPT]);
      expect(await run.exited).to.deep.equal([0, null]);
      expect(run.stdout.text).to.include(`${REPLY}\n`);
      expect(run.stdout.lines.filter((line) => line !== '').at(-1)).to.equal('[done] end_turn');
      expect(run.stderr.text).not.to.match(SCHEMA_REJECTION);
      await expectNothingLeft();
    });
  }

  it('ends a turn [done] cancelled and exits 0 on SIGINT (Ctrl-C) mid-turn, through acp-wire conduct', async () => {
    const run = acpx(home, AGENTS.slow, ['exec', PROMPT]);
    await run.stdout.findText(/echo: /);
    run.child.kill('SIGINT');
    expect(await run.exited).to.deep.equal([0, null]);
    expect(run.stdout.text).not.to.include(REPLY);
    expect(run.stdout.lines.filter((line) => line !== '').at(-1)).to.equal('[done] cancelled');
    expect(run.stderr.text).not.to.match(SCHEMA_REJECTION);
    await expectNothingLeft();
  });

  it('ends a turn [done] cancelled and exits 0 when a terminal Ctrl-C signals its whole process group, the conductor included', async () => {
    // acpx does not detach its agent: a Ctrl-C reaches acpx and `acp-wire conduct` at once. The
    // conductor keeps routing until acpx has cancelled the turn and ended its stdin.
    const run = acpx(home, AGENTS.slow, ['exec', PROMPT], { detached: true });
    await run.stdout.findText(/echo: /);
    const members = processGroupMembers(run.child.pid!);
    expect(
      members.some((pid) => commandOf(pid).includes(CLI)),
      "the conductor is in acpx's process group",
    ).to.equal(true);
    process.kill(-run.child.pid!, 'SIGINT');
    expect(await run.exited, run.stderr.text).to.deep.equal([0, null]);
    expect(run.stdout.text).not.to.include(REPLY);
    expect(run.stdout.lines.filter((line) => line !== '').at(-1)).to.equal('[done] cancelled');
    expect(run.stderr.text).not.to.match(SCHEMA_REJECTION);
    await expectNothingLeft();
  });

  it('ends a turn [done] cancelled with `acpx cancel`, through acp-wire conduct', async () => {
    const created = acpx(home, AGENTS.slow, ['sessions', 'new']);
    expect(await created.exited, created.stderr.text).to.deep.equal([0, null]);
    const prompt = acpx(home, AGENTS.slow, ['prompt', PROMPT]);
    try {
      await prompt.stdout.findText(/echo: /);
      const cancel = acpx(home, AGENTS.slow, ['cancel']);
      expect(await cancel.exited, cancel.stderr.text).to.deep.equal([0, null]);
      expect(await prompt.exited).to.deep.equal([0, null]);
      expect(prompt.stdout.text).not.to.include(REPLY);
      expect(prompt.stdout.lines.filter((line) => line !== '').at(-1)).to.equal('[done] cancelled');
      expect(prompt.stderr.text).not.to.match(SCHEMA_REJECTION);
    } finally {
      // The session's queue owner keeps the agent chain running until the session is closed.
      const closed = acpx(home, AGENTS.slow, ['sessions', 'close']);
      expect(await closed.exited, closed.stderr.text).to.deep.equal([0, null]);
    }
    await expectNothingLeft();
  });
});
