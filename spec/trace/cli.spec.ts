/**
 * The command line's trace options: `conduct --trace-file`, `conduct --serve [--port]` and
 * `trace view PATH`, through real processes.
 */
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { expect } from 'chai';
import { listenTcp } from '../../lib';
import { readTraceFile, type TraceEvent } from '../../lib/trace';
import { lineMatching } from '../helpers/messages';
import { CLI, childClosed, spawnScript, stopAll, useBuild, type SpawnedProcess } from '../helpers/processes';
import { AGENT_COMMAND, CLIENT_INIT, PASSTHROUGH_COMMAND, schemaErrors, tempDir } from './helpers';

/** GET on 127.0.0.1 with an optional Host header: status, content type and body. */
function get(port: number, path: string, host = `127.0.0.1:${port}`): Promise<{ status: number; type: string; csp: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          type: String(response.headers['content-type']),
          csp: String(response.headers['content-security-policy']),
          body,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** `acp-wire <args>`. */
function run(args: readonly string[]): SpawnedProcess {
  return spawnScript(CLI, args);
}

/** The events of a trace, as `type from→to` (what the diagram draws). */
function arrows(events: readonly TraceEvent[]): string[] {
  return events.map((event) => `${event.type} ${event.from}→${event.to}`);
}

describe('acp-wire trace options', function () {
  this.timeout(30000);
  useBuild();

  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await stopAll();
    dir.remove();
  });

  it('conduct --trace-file writes the chain of an initialize through two proxies, valid against the schema', async () => {
    const file = join(dir.path, 'cli.jsons');
    const chain = run(['conduct', '--trace-file', file, PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND]);
    await chain.request(1, 'initialize', CLIENT_INIT);
    expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
    const events = readTraceFile(file);
    expect(arrows(events)).to.deep.equal([
      'request Client→Proxy(0)',
      'request Proxy(0)→Proxy(1)',
      'request Proxy(1)→Agent',
      'response Agent→Proxy(1)',
      'response Proxy(1)→Proxy(0)',
      'response Proxy(0)→Client',
    ]);
    for (const event of events) expect(schemaErrors(event)).to.equal('');
  });

  it('conduct --serve serves the live events on 127.0.0.1 and says where on stderr', async () => {
    const chain = run(['conduct', '--serve', '--port', '0', PASSTHROUGH_COMMAND, AGENT_COMMAND]);
    const viewerLine = /^acp-wire conduct: viewer (http:\/\/127\.0\.0\.1:(\d+)\/)$/;
    const [, url, port] = viewerLine.exec(await chain.stderr.find(lineMatching(viewerLine)))!;
    expect(url).to.equal(`http://127.0.0.1:${port}/`);
    expect(await chain.request(1, 'initialize', CLIENT_INIT)).to.match(/^\{"jsonrpc":"2\.0","id":1,"result"/);
    const events = JSON.parse((await get(Number(port), '/events')).body) as TraceEvent[];
    expect(arrows(events)).to.deep.equal([
      'request Client→Proxy(0)',
      'request Proxy(0)→Agent',
      'response Agent→Proxy(0)',
      'response Proxy(0)→Client',
    ]);
    expect(await chain.stop()).to.deep.equal({ code: 0, signal: null });
    // The viewer ends with the chain.
    expect(await get(Number(port), '/events').catch((error: NodeJS.ErrnoException) => error.code)).to.equal('ECONNREFUSED');
  });

  it('conduct --trace-file with a path that cannot be opened exits 1 with one line naming it, and starts nothing', async () => {
    const file = join(dir.path, 'no-such-dir', 'trace.jsons');
    const chain = run(['conduct', '--trace-file', file, AGENT_COMMAND]);
    const exit = await childClosed(chain.child);
    expect({ exit, stdout: chain.stdout.text, stderr: chain.stderr.text }).to.deep.equal({
      exit: { code: 1, signal: null },
      stdout: '',
      stderr: `acp-wire conduct: open ${file} failed: no such file or directory\n`,
    });
  });

  it('conduct --serve with a port in use exits 1 with one line naming it, and starts nothing', async () => {
    await using taken = await listenTcp({ port: 0 }, (connection) => void connection.close());
    const chain = run(['conduct', '--serve', '--port', String(taken.port), AGENT_COMMAND]);
    const exit = await childClosed(chain.child);
    expect({ exit, stdout: chain.stdout.text, stderr: chain.stderr.text }).to.deep.equal({
      exit: { code: 1, signal: null },
      stdout: '',
      stderr: `acp-wire conduct: cannot listen on 127.0.0.1:${taken.port}: address already in use\n`,
    });
  });

  it('trace view PATH serves the page and the file, refuses other hosts, and exits 0 on SIGTERM', async () => {
    const file = join(dir.path, 'saved.jsons');
    const event = { type: 'notification', ts: 0.5, protocol: 'acp', from: 'Client', to: 'Agent', method: 'n', params: null };
    writeFileSync(file, `${JSON.stringify(event)}\n`);
    const viewer = run(['trace', 'view', file, '--port=0']);
    const [, port] = /^http:\/\/127\.0\.0\.1:(\d+)\/$/.exec(await viewer.stdout.take())!;
    const page = await get(Number(port), '/');
    expect(page.status).to.equal(200);
    expect(page.type).to.equal('text/html; charset=utf-8');
    expect(page.csp).to.contain("default-src 'none'").and.contain("connect-src 'self'");
    expect(JSON.parse((await get(Number(port), '/events')).body)).to.deep.equal([event]);
    expect(JSON.parse((await get(Number(port), '/poll?since=1')).body)).to.deep.equal({ next: 1, events: [] });
    expect((await get(Number(port), '/events', 'attacker.example')).status).to.equal(403);
    viewer.child.kill('SIGTERM');
    expect(await viewer.exited).to.deep.equal({ code: 0, signal: null });
    expect(viewer.stderr.text).to.equal('');
  });

  it('trace --help prints its usage on stdout and exits 0, and acp-wire --help lists it', async () => {
    const help = run(['trace', '--help']);
    expect(await childClosed(help.child)).to.deep.equal({ code: 0, signal: null });
    expect(help.stdout.lines[0]).to.equal('usage: acp-wire trace view [options] [--] PATH');
    expect(help.stdout.text).to.include('  --port N ');
    const top = run(['--help']);
    expect(await childClosed(top.child)).to.deep.equal({ code: 0, signal: null });
    expect(top.stdout.lines).to.include('  trace      serve the sequence-diagram viewer of a trace file (trace view PATH)');
  });

  for (const [args, line] of [
    [['conduct', '--port', '1', AGENT_COMMAND], 'acp-wire conduct: --port needs --serve (see acp-wire conduct --help)'],
    [
      ['conduct', '--port', '1', '--trace-file', 'x.jsons', AGENT_COMMAND],
      'acp-wire conduct: --port needs --serve (see acp-wire conduct --help)',
    ],
    [
      ['conduct', '--tcp', '0', '--trace-file', 'x.jsons', AGENT_COMMAND],
      'acp-wire conduct: --trace-file trace one chain: they cannot be used with --tcp (see acp-wire conduct --help)',
    ],
    [
      ['conduct', '--listen', '0', '--serve', AGENT_COMMAND],
      'acp-wire conduct: --serve trace one chain: they cannot be used with --listen (see acp-wire conduct --help)',
    ],
    [
      ['conduct', '--trace-file', 'x.jsons', '--serve', 'ws://127.0.0.1:1/acp'],
      'acp-wire conduct: --trace-file and --serve trace components started as commands: they cannot be used with a component named by a URL (ws://127.0.0.1:1/acp) (see acp-wire conduct --help)',
    ],
    [['conduct', '--trace-file'], 'acp-wire conduct: --trace-file needs a value (see acp-wire conduct --help)'],
    [['conduct', '--trace-file=', AGENT_COMMAND], 'acp-wire conduct: --trace-file needs a path, got "" (see acp-wire conduct --help)'],
    [['conduct', '--serve=1', AGENT_COMMAND], 'acp-wire conduct: --serve takes no value (see acp-wire conduct --help)'],
    [
      ['conduct', '--serve', '--port', '65536', AGENT_COMMAND],
      'acp-wire conduct: --port needs a port from 0 to 65535, got "65536" (see acp-wire conduct --help)',
    ],
    [['trace'], 'acp-wire trace: give a trace subcommand: view (see acp-wire trace --help)'],
    [['trace', 'show', 'x.jsons'], 'acp-wire trace: unknown trace subcommand "show" (there is: view) (see acp-wire trace --help)'],
    [['trace', 'view'], 'acp-wire trace: view needs the path of a trace file (see acp-wire trace --help)'],
    [['trace', 'view', 'a.jsons', 'b.jsons'], 'acp-wire trace: view takes one trace file, got 2 (see acp-wire trace --help)'],
    [
      ['trace', 'view', 'a.jsons', '--port', 'x'],
      'acp-wire trace: --port needs a port from 0 to 65535, got "x" (see acp-wire trace --help)',
    ],
    [['trace', 'view', 'a.jsons', '--bogus'], 'acp-wire trace: unknown option --bogus (see acp-wire trace --help)'],
  ] as const) {
    it(`exits 2 with one line naming the problem, and nothing started, for: ${args.join(' ')}`, async () => {
      const child = run(args);
      const exit = await childClosed(child.child);
      expect({ exit, stdout: child.stdout.text, stderr: child.stderr.text }).to.deep.equal({
        exit: { code: 2, signal: null },
        stdout: '',
        stderr: `${line}\n`,
      });
    });
  }
});
