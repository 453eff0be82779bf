/**
 * The `acp-wire` command line as a user runs it (`node dist/bin/acp-wire.js …`): help, version,
 * usage errors (exit 2, one line naming the problem) and system errors (exit 1, one line).
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { AGENT_COMMAND } from '../helpers/chain';
import { CLI, ROOT, useBuild } from '../helpers/processes';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the command line to its end (stdin empty), bounded in time. */
function acpWire(...args: string[]): Run {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    input: '',
    timeout: 15000,
    env: { ...process.env, ACP_WIRE_LOG: '', ACP_WIRE_TOKEN: '' },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const CONDUCT_USAGE = 'usage: acp-wire conduct [options] [--] "<proxy command>"… "<agent command>"';

describe('acp-wire (the command line)', function () {
  this.timeout(30000);
  useBuild();

  describe('help and version', () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      it(`acp-wire ${args.join(' ')} prints the commands on stdout and exits 0`, () => {
        const run = acpWire(...args);
        expect(run).to.deep.include({ status: 0, stderr: '' });
        expect(run.stdout).to.match(/^usage: acp-wire <command> \[options\]\n/);
        expect(run.stdout).to.match(/\n {2}conduct {4}run an ACP proxy chain/);
        expect(run.stdout).to.match(/\n {2}serve {6}expose a stdio agent over WebSocket and Streamable HTTP/);
        expect(run.stdout).to.match(/\n {2}mcp-stdio {2}relay a stdio MCP client to a server bridged by conduct --mcp-bridge/);
      });
    }

    for (const args of [
      ['conduct', '--help'],
      ['conduct', '-h'],
      ['help', 'conduct'],
      ['conduct', '--tcp', 'x', '-h', AGENT_COMMAND],
    ]) {
      it(`acp-wire ${args.map((arg) => (arg === AGENT_COMMAND ? '<agent>' : arg)).join(' ')} prints the conduct usage on stdout, exits 0 and starts nothing`, () => {
        const run = acpWire(...args);
        expect(run).to.deep.include({ status: 0, stderr: '' });
        expect(run.stdout.split('\n')[0]).to.equal(CONDUCT_USAGE);
        for (const option of [
          '--trace',
          '--tcp PORT',
          '--listen ADDRESS',
          '--max-chains N',
          '--drain-timeout MS',
          '--idle-timeout MS',
          '--kill-timeout MS',
          '--request-timeout MS',
          '--mcp-bridge',
          '-h, --help',
        ]) {
          expect(run.stdout).to.include(`  ${option} `);
        }
      });
    }

    it('acp-wire --version prints the package version and exits 0', () => {
      expect(acpWire('--version')).to.deep.equal({ status: 0, stdout: `${VERSION}\n`, stderr: '' });
    });
  });

  describe('bad usage: exit 2, nothing on stdout, one line on stderr naming the problem', () => {
    const cases: [string[], string][] = [
      [[], 'acp-wire: no command given (see acp-wire --help)'],
      [['nope'], 'acp-wire: unknown command "nope" (see acp-wire --help)'],
      [['help', 'nope'], 'acp-wire: unknown command "nope" (see acp-wire --help)'],
      [['--nope'], 'acp-wire: unknown option --nope (see acp-wire --help)'],
      [['conduct'], 'acp-wire conduct: give at least the agent command (see acp-wire conduct --help)'],
      [['conduct', '--nope', AGENT_COMMAND], 'acp-wire conduct: unknown option --nope (see acp-wire conduct --help)'],
      [['conduct', '--tcp'], 'acp-wire conduct: --tcp needs a value (see acp-wire conduct --help)'],
      [['conduct', '--trace=1', AGENT_COMMAND], 'acp-wire conduct: --trace takes no value (see acp-wire conduct --help)'],
      [
        ['conduct', '--max-chains', '2', AGENT_COMMAND],
        'acp-wire conduct: --max-chains needs --tcp or --listen (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--tcp', '0', '--listen', '0', AGENT_COMMAND],
        'acp-wire conduct: give --tcp or --listen, not both (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--mcp-bridge-transport', 'stdio', AGENT_COMMAND],
        'acp-wire conduct: --mcp-bridge-transport needs --mcp-bridge (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--mcp-bridge', '--mcp-bridge-transport', 'sse', AGENT_COMMAND],
        'acp-wire conduct: --mcp-bridge-transport takes http or stdio, got "sse" (see acp-wire conduct --help)',
      ],
      [['mcp-stdio'], "acp-wire mcp-stdio: ACP_WIRE_MCP_URL must hold the bridged server's URL (see acp-wire mcp-stdio --help)"],
      [
        ['conduct', '--listen', '0', '--idle-timeout', '1000', AGENT_COMMAND],
        'acp-wire conduct: --idle-timeout needs --tcp (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--listen', 'wss://127.0.0.1:0/acp', AGENT_COMMAND],
        'acp-wire conduct: --listen serves ws:// only (put a TLS proxy in front of it for wss://), got "wss://127.0.0.1:0/acp" (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--listen', '::1:80', AGENT_COMMAND],
        'acp-wire conduct: --listen needs PORT, HOST:PORT or ws://HOST:PORT/PATH, got "::1:80" (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--listen', 'localhost:0x10', AGENT_COMMAND],
        'acp-wire conduct: --listen needs a port from 0 to 65535, got "0x10" (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--listen', 'ws://127.0.0.1:65536/acp', AGENT_COMMAND],
        'acp-wire conduct: --listen needs PORT, HOST:PORT or ws://HOST:PORT/PATH, got "ws://127.0.0.1:65536/acp" (see acp-wire conduct --help)',
      ],
      [
        ['serve', '--kill-timeout', '1.5', AGENT_COMMAND],
        'acp-wire serve: --kill-timeout needs a number of milliseconds from 0 to 2147483647, got "1.5" (see acp-wire serve --help)',
      ],
      [
        ['conduct', '--tcp', '0', '--max-chains', '0', AGENT_COMMAND],
        'acp-wire conduct: --max-chains needs a number from 1 to 65535, got "0" (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--tcp', '0', '--idle-timeout', '1s', AGENT_COMMAND],
        'acp-wire conduct: --idle-timeout needs a number of milliseconds from 0 to 2147483647, got "1s" (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--kill-timeout', '-5', AGENT_COMMAND],
        'acp-wire conduct: --kill-timeout needs a number of milliseconds from 0 to 2147483647, got "-5" (see acp-wire conduct --help)',
      ],
      // 192.0.2.1 (TEST-NET-1, on no interface): were the refusal missing, the listen would fail, not expose anything.
      [
        ['serve', '--host', '192.0.2.1', AGENT_COMMAND],
        'acp-wire serve: --host 192.0.2.1 is reachable from other machines: set ACP_WIRE_TOKEN, or pass --insecure-no-token to serve anyone who reaches it (see acp-wire serve --help)',
      ],
      [
        ['conduct', '--listen', '192.0.2.1:0', AGENT_COMMAND],
        'acp-wire conduct: --listen 192.0.2.1 is reachable from other machines: set ACP_WIRE_TOKEN, or pass --insecure-no-token to serve anyone who reaches it (see acp-wire conduct --help)',
      ],
      [
        ['conduct', '--insecure-no-token', AGENT_COMMAND],
        'acp-wire conduct: --insecure-no-token needs --listen (see acp-wire conduct --help)',
      ],
      [
        ['conduct', 'node "agent.js'],
        'acp-wire conduct: cannot split the command "node \\"agent.js": a double quote is not closed (see acp-wire conduct --help)',
      ],
    ];
    for (const port of ['0x10', '1e3', ' 0', '-1', '65536', '1.5', '']) {
      cases.push([
        ['conduct', '--tcp', port, AGENT_COMMAND],
        `acp-wire conduct: --tcp needs a port from 0 to 65535, got ${JSON.stringify(port)} (see acp-wire conduct --help)`,
      ]);
    }
    for (const [args, line] of cases) {
      it(`acp-wire ${args.map((arg) => (arg === AGENT_COMMAND ? '<agent>' : JSON.stringify(arg))).join(' ')}`, () => {
        expect(acpWire(...args)).to.deep.equal({ status: 2, stdout: '', stderr: `${line}\n` });
      });
    }
  });

  describe('a bearer token with whitespace in ACP_WIRE_TOKEN: exit 2, one line, where the token is used', () => {
    const run = (...args: string[]): Run => {
      const result = spawnSync(process.execPath, [CLI, ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        input: '',
        timeout: 15000,
        env: { ...process.env, ACP_WIRE_LOG: '', ACP_WIRE_TOKEN: 'two words' },
      });
      return { status: result.status, stdout: result.stdout, stderr: result.stderr };
    };
    for (const args of [
      ['serve', AGENT_COMMAND],
      ['conduct', '--listen', '0', AGENT_COMMAND],
      ['conduct', 'ws://127.0.0.1:1/acp'],
    ]) {
      it(`acp-wire ${args.map((arg) => (arg === AGENT_COMMAND ? '<agent>' : arg)).join(' ')}`, () => {
        expect(run(...args)).to.deep.equal({
          status: 2,
          stdout: '',
          stderr: `acp-wire ${args[0]}: ACP_WIRE_TOKEN must not hold whitespace (see acp-wire ${args[0]} --help)\n`,
        });
      });
    }

    it('acp-wire conduct <agent> on stdio, which sends no token, ignores it', () => {
      expect(run('conduct', AGENT_COMMAND)).to.deep.equal({ status: 0, stdout: '', stderr: '' });
    });
  });

  describe('operating-system errors: exit 1, one line naming the cause, no stack trace', () => {
    for (const command of [
      ['conduct', '--tcp'],
      ['conduct', '--listen'],
      ['serve', '--port'],
    ]) {
      it(`a port in use (${command.join(' ')}): cannot listen on 127.0.0.1:PORT: address already in use`, async () => {
        const server = createServer();
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        const { port } = server.address() as AddressInfo;
        try {
          expect(acpWire(...command, String(port), AGENT_COMMAND)).to.deep.equal({
            status: 1,
            stdout: '',
            stderr: `acp-wire ${command[0]}: cannot listen on 127.0.0.1:${port}: address already in use\n`,
          });
        } finally {
          server.close();
        }
      });
    }
  });
});
