/**
 * The command line's trace options: `conduct --trace-file`, `conduct --serve [--port]` and
 * `trace view PATH`, through real processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { expect } from 'chai';
import { readTraceFile, type TraceEvent } from '../../lib';
import { AGENT_COMMAND, CLI, CLIENT_INIT, PASSTHROUGH_COMMAND, ensureBuilt, schemaErrors, tempDir } from './helpers';

const INIT_LINE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: CLIENT_INIT });

/** The first line of `stream` that matches (rejects if the stream ends first). */
function lineMatching(stream: Readable, pattern: RegExp): Promise<RegExpExecArray> {
  const lines = createInterface({ input: stream });
  return new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      const match = pattern.exec(line);
      if (!match) return;
      resolve(match);
      lines.close();
    });
    lines.once('close', () => reject(new Error(`no line matched ${pattern}`)));
  });
}

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

function run(args: readonly string[]): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
}

async function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

describe('acp-wire trace options', function () {
  this.timeout(30000);
  before(() => ensureBuilt());

  let dir: ReturnType<typeof tempDir>;
  let child: ChildProcess | undefined;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    child = undefined;
    dir.remove();
  });

  it('conduct --trace-file writes the chain of an initialize through two proxies, valid against the schema', async () => {
    const file = join(dir.path, 'cli.jsons');
    child = run(['conduct', '--trace-file', file, PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND]);
    child.stdin!.write(`${INIT_LINE}\n`);
    await lineMatching(child.stdout!, /^\{"jsonrpc":"2\.0","id":1,"result"/);
    child.stdin!.end();
    expect(await exitCode(child)).to.equal(0);
    const events = readTraceFile(file);
    expect(events.map((event) => `${event.type} ${event.from}→${event.to}`)).to.deep.equal([
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
    child = run(['conduct', '--serve', '--port', '0', PASSTHROUGH_COMMAND, AGENT_COMMAND]);
    const [, url, port] = await lineMatching(child.stderr!, /viewer (http:\/\/127\.0\.0\.1:(\d+)\/)$/);
    expect(url).to.equal(`http://127.0.0.1:${port}/`);
    child.stdin!.write(`${INIT_LINE}\n`);
    await lineMatching(child.stdout!, /^\{"jsonrpc":"2\.0","id":1,"result"/);
    const events = JSON.parse((await get(Number(port), '/events')).body) as TraceEvent[];
    expect(events.map((event) => `${event.type} ${event.from}→${event.to}`)).to.deep.equal([
      'request Client→Proxy(0)',
      'request Proxy(0)→Agent',
      'response Agent→Proxy(0)',
      'response Proxy(0)→Client',
    ]);
    child.stdin!.end();
    expect(await exitCode(child)).to.equal(0);
  });

  it('trace view PATH serves the page and the file, refuses other hosts, and exits 0 on SIGTERM', async () => {
    const file = join(dir.path, 'saved.jsons');
    const event = { type: 'notification', ts: 0.5, protocol: 'acp', from: 'Client', to: 'Agent', method: 'n', params: null };
    writeFileSync(file, `${JSON.stringify(event)}\n`);
    child = run(['trace', 'view', file, '--port=0']);
    const [, port] = await lineMatching(child.stdout!, /^http:\/\/127\.0\.0\.1:(\d+)\/$/);
    const page = await get(Number(port), '/');
    expect(page.status).to.equal(200);
    expect(page.type).to.equal('text/html; charset=utf-8');
    expect(page.csp).to.contain("default-src 'none'").and.contain("connect-src 'self'");
    expect(JSON.parse((await get(Number(port), '/events')).body)).to.deep.equal([event]);
    expect(JSON.parse((await get(Number(port), '/poll?since=1')).body)).to.deep.equal({ next: 1, events: [] });
    expect((await get(Number(port), '/events', 'attacker.example')).status).to.equal(403);
    child.kill('SIGTERM');
    expect(await exitCode(child)).to.equal(0);
  });

  for (const [args, message] of [
    [['conduct', '--port', '1', AGENT_COMMAND], '--port needs --serve'],
    [['conduct', '--tcp', '0', '--trace-file', 'x.jsons', AGENT_COMMAND], 'cannot be used with --tcp'],
    [['conduct', '--trace-file'], '--trace-file needs a path'],
    [['trace', 'view'], 'trace view needs the path of a trace file'],
  ] as const) {
    it(`exits 2 with the usage for: ${args.join(' ')}`, async () => {
      child = run(args);
      const stderr = lineMatching(child.stderr!, /acp-wire conduct: (.*)$/);
      expect((await stderr)[1]).to.contain(message);
      expect(await exitCode(child)).to.equal(2);
    });
  }
});
