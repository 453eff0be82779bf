/**
 * What a process loads when it requires acp-wire: the subpath entries and the CLI's conduct path
 * load no remote transport, trace file machinery or MCP bridge; the root index loads its upper
 * layers only when one of their exports is read, and still exports every name. Each check runs
 * the built package in a fresh Node process and reads `require.cache`.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as api from '../lib';
import { EAGER_FOLDERS } from '../scripts/eager-folders';
import { ROOT, useBuild } from './helpers/processes';

const DIST = join(ROOT, 'dist', 'lib');

/** Runs `script` in a fresh Node process; it prints JSON, which this returns. */
function inChild<T>(script: string): T {
  const result = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`the child process failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** The files under the repository (dist/lib/…, node_modules/…) a fresh process has loaded once it ran `script`. */
function loadedAfter(script: string): string[] {
  const files = inChild<string[]>(`${script}\nprocess.stdout.write(JSON.stringify(Object.keys(require.cache)));`);
  return files.map((file) => relative(ROOT, file));
}

/** The files a process loads by requiring `entries` (paths from the repository). */
const loadedBy = (...entries: string[]): string[] =>
  loadedAfter(entries.map((entry) => `require(${JSON.stringify(join(ROOT, entry))});`).join(''));

/** The files a process loads by reading the CLI's main module, `conduct` and the `Conductor` class from dist/lib/conduct.js. */
const loadedByConduct = (): string[] =>
  loadedAfter(`const conduct = require(${JSON.stringify(join(DIST, 'conduct.js'))});
     void [conduct['cli/main'].runCli, conduct['cli/conduct'], conduct['chain/conductor'].Conductor];`);

/** The modules that only remote peers, trace files and viewers, or the MCP bridge need. */
const isHeavy = (file: string): boolean =>
  /^dist\/lib\/(transports\/remote|mcp-bridge|mcp)\//.test(file) ||
  /^dist\/lib\/trace\/(file|recorder|store|server|events|redact)\.js$/.test(file) ||
  file.startsWith('node_modules/ws/');

/** Every compiled `.js` file under `dir`. */
function compiledFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return compiledFiles(path);
    return name.endsWith('.js') ? [path] : [];
  });
}

describe('start-up: what requiring acp-wire loads', function () {
  this.timeout(60000);
  useBuild();

  it('acp-wire/connection and acp-wire/transports load no remote transport, trace module or MCP code', () => {
    const loaded = loadedBy('dist/lib/connection/index.js', 'dist/lib/transports/index.js');
    expect(loaded).to.include('dist/lib/transports/tcp.js');
    expect(loaded.filter((file) => file.startsWith('dist/lib/trace/') || isHeavy(file))).to.deep.equal([]);
  });

  it('the connection layer is one compiled module: a proxy loads dist/lib/core.js and, of the layer, only the error classes beside it', () => {
    const loaded = loadedBy('dist/lib/chain/index.js', 'dist/lib/transports/index.js');
    const isLayer = (file: string): boolean =>
      file === 'dist/lib/core.js' || EAGER_FOLDERS.some((folder) => file.startsWith(`dist/lib/${folder}/`));
    expect(loaded.filter(isLayer).sort()).to.deep.equal(['dist/lib/core.js', 'dist/lib/jsonrpc/errors.js']);
    const layerFiles = EAGER_FOLDERS.flatMap((folder) => compiledFiles(join(DIST, folder)));
    expect(layerFiles.map((file) => relative(DIST, file)).sort()).to.deep.equal([
      'connection/index.js',
      'jsonrpc/errors.js',
      'support/package-version.js',
    ]);
  });

  it('a passthrough proxy on stdio (examples/passthrough-proxy.ts) loads four files of acp-wire to run', () => {
    const loaded = loadedAfter(
      `const { ProxyComponent, connectStdio, createStderrLogger } = require(${JSON.stringify(DIST)});
       void [ProxyComponent, connectStdio, createStderrLogger];`,
    );
    expect(loaded.sort()).to.deep.equal([
      'dist/lib/connection/index.js',
      'dist/lib/core.js',
      'dist/lib/index.js',
      'dist/lib/jsonrpc/errors.js',
    ]);
  });

  it('acp-wire conduct loads its subcommand, the conductor and what they use from dist/lib/conduct.js and dist/lib/core.js', () => {
    expect(loadedByConduct().sort()).to.deep.equal([
      'dist/lib/chain/command-line.js',
      'dist/lib/conduct.js',
      'dist/lib/core.js',
      'dist/lib/jsonrpc/errors.js',
      'dist/lib/support/package-version.js',
      'dist/lib/transports/process-tree.js',
    ]);
  });

  it('the compiled tree is CommonJS by a package.json of its own, so that Node looks no further up for a package scope', () => {
    expect(JSON.parse(readFileSync(join(DIST, 'package.json'), 'utf8'))).to.deep.equal({ type: 'commonjs' });
  });

  it('acp-wire/chain and acp-wire/acp (a proxy, an agent) load no remote transport, trace file machinery or MCP bridge', () => {
    const loaded = loadedBy('dist/lib/chain/index.js', 'dist/lib/acp/index.js', 'dist/lib/transports/index.js');
    expect(loaded).to.include('dist/lib/acp/agent.js');
    expect(loaded.filter((file) => isHeavy(file) && file !== 'dist/lib/mcp/protocol.js')).to.deep.equal([]);
  });

  it('the CLI on its conduct path loads no remote transport, trace file machinery or MCP bridge', () => {
    const loaded = loadedByConduct();
    expect(loaded).to.include('dist/lib/conduct.js');
    expect(loaded.filter((file) => file.startsWith('dist/lib/trace/') || isHeavy(file))).to.deep.equal([]);
  });

  it('acp-wire conduct on stdio spawns its components before it loads the connection layer', () => {
    const bin = join(ROOT, 'dist', 'bin', 'acp-wire.js');
    const agent = `node ${join(ROOT, 'dist', 'examples', 'conformance-agent.js')}`;
    const script = `const childProcess = require('node:child_process'); const { spawn } = childProcess;
      childProcess.spawn = (...args) => {
        require('node:fs').writeSync(1, JSON.stringify(Object.keys(require.cache)) + '\\n');
        childProcess.spawn = spawn;
        return spawn(...args);
      };
      process.argv = [process.argv[0], ${JSON.stringify(bin)}, 'conduct', ${JSON.stringify(agent)}];
      require(${JSON.stringify(bin)});`;
    const result = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8', input: '' });
    const loaded = (JSON.parse(result.stdout.split('\n')[0]!) as string[]).map((file) => relative(ROOT, file));
    expect(loaded).to.include('dist/lib/transports/process-tree.js');
    expect(
      loaded.filter((file) => /^dist\/lib\/(core\.js|conduct\.js|connection|requests|framing|chain\/conductor)/.test(file)),
    ).to.deep.equal([]);
  });

  it('acp-wire conduct on stdio hands its early processes to the conductor: each component is spawned once', () => {
    const bin = join(ROOT, 'dist', 'bin', 'acp-wire.js');
    const proxy = `node ${join(ROOT, 'dist', 'examples', 'passthrough-proxy.js')}`;
    const agent = `node ${join(ROOT, 'dist', 'examples', 'conformance-agent.js')}`;
    const script = `const childProcess = require('node:child_process'); const { spawn } = childProcess;
      const spawned = [];
      childProcess.spawn = (command, args, ...rest) => (spawned.push([command, ...args].join(' ')), spawn(command, args, ...rest));
      process.on('exit', () => require('node:fs').writeSync(2, 'SPAWNED ' + JSON.stringify(spawned) + '\\n'));
      process.argv = [process.argv[0], ${JSON.stringify(bin)}, 'conduct', '--trace', ${JSON.stringify(proxy)}, ${JSON.stringify(agent)}];
      require(${JSON.stringify(bin)});`;
    const result = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8', input: '' });
    expect(result.status).to.equal(0);
    const line = result.stderr.split('\n').find((text) => text.startsWith('SPAWNED '));
    expect(JSON.parse(line!.slice('SPAWNED '.length))).to.deep.equal([proxy, agent]);
  });

  it('acp-wire conduct fails on a component that cannot be started as it does without spawning early', () => {
    const bin = join(ROOT, 'dist', 'bin', 'acp-wire.js');
    const agent = `node ${join(ROOT, 'dist', 'examples', 'conformance-agent.js')}`;
    const initialize = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}\n';
    // `--kill-timeout 2000` is the default, and an option early spawning leaves to the subcommand.
    const run = (...options: string[]) => {
      const result = spawnSync(process.execPath, [bin, 'conduct', ...options, 'acp-wire-no-such-program --x', agent], {
        cwd: ROOT,
        encoding: 'utf8',
        input: initialize,
      });
      return { status: result.status, stdout: result.stdout, stderr: result.stderr.replace(/^\S+Z /gm, '') };
    };
    const early = run();
    expect(early.stdout).to.include('"reason":"component_not_started"');
    expect(early.stderr).to.include('proxy1 warn connection closed (peer exited): Error: spawn acp-wire-no-such-program ENOENT');
    expect(early).to.deep.equal(run('--kill-timeout', '2000'));
  });

  it('a ProxyComponent forwarding a request, with no tracer provider registered, loads neither OpenTelemetry nor its bridge (trace/otel)', () => {
    const loaded = inChild<string[]>(
      `const { ProxyComponent } = require(${JSON.stringify(join(DIST, 'chain'))});
       const { createConnectionPair } = require(${JSON.stringify(join(DIST, 'transports'))});
       const [client, proxy] = createConnectionPair();
       new ProxyComponent(proxy);
       client.onRequest('proxy/successor', () => ({}));
       client.sendRequest('proxy/initialize', { protocolVersion: 1, clientCapabilities: {} }).then(() =>
         process.stdout.write(JSON.stringify(Object.keys(require.cache))));`,
    );
    expect(loaded.some((file) => file.includes('trace/otel.js'))).to.equal(false);
    expect(loaded.filter((file) => file.includes('@opentelemetry'))).to.deep.equal([]);
  });

  it('a ProxyComponent forwarding a request loads neither node:v8, node:vm nor node:perf_hooks (the idle collector loads them when it forces a collection)', () => {
    const builtins = inChild<string[]>(
      `const { ProxyComponent } = require(${JSON.stringify(join(DIST, 'chain'))});
       const { createConnectionPair } = require(${JSON.stringify(join(DIST, 'transports'))});
       const [client, proxy] = createConnectionPair();
       new ProxyComponent(proxy);
       client.onRequest('proxy/successor', () => ({}));
       client.sendRequest('proxy/initialize', { protocolVersion: 1, clientCapabilities: {} }).then(() =>
         process.stdout.write(JSON.stringify(process.moduleLoadList)));`,
    );
    expect(builtins).to.include('NativeModule stream');
    expect(builtins.filter((name) => /^NativeModule (v8|vm|perf_hooks)$/.test(name))).to.deep.equal([]);
  });

  it('requiring the root index loads the connection layer and below, nothing above it', () => {
    const above = loadedBy('dist/lib/index.js').filter(
      (file) =>
        file.startsWith('dist/lib/') && !/^dist\/lib\/(index|core|(jsonrpc|framing|support|connection|requests|gc)\/.*)\.js$/.test(file),
    );
    expect(above).to.deep.equal([]);
  });

  it('an ES module importing the root (every export read) loads no check, MCP provider or bridge, or trace file machinery', () => {
    const script = `import ${JSON.stringify(join(DIST, 'index.js'))}; import { createRequire } from 'node:module';
      process.stdout.write(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    const loaded = (JSON.parse(result.stdout) as string[]).map((file) => relative(ROOT, file));
    expect(loaded).to.include('dist/lib/transports/remote/http/remote-server.js');
    const subpathOnly = loaded.filter(
      (file) =>
        /^dist\/lib\/(check|mcp-bridge|hosting)\//.test(file) ||
        (/^dist\/lib\/(mcp|trace)\//.test(file) && isHeavy(file) && file !== 'dist/lib/mcp/protocol.js'),
    );
    expect(subpathOnly).to.deep.equal([]);
  });

  it('the root index exports every name lib/index.ts declares, each one defined', () => {
    const names = inChild<Record<string, string>>(
      `const api = require(${JSON.stringify(DIST)}); const types = {};
       for (const name of Object.keys(api)) types[name] = typeof api[name];
       process.stdout.write(JSON.stringify(types));`,
    );
    const expected = Object.fromEntries(Object.entries(api).map(([name, value]) => [name, typeof value]));
    expect(names).to.deep.equal(expected);
  });

  it('each subpath entry exports the very values the root exports under the same names', () => {
    const mismatched = inChild<string[]>(
      `const root = require(${JSON.stringify(DIST)}); const bad = [];
       for (const entry of ['connection', 'transports', 'acp', 'chain']) {
         const sub = require(${JSON.stringify(DIST)} + '/' + entry);
         for (const name of Object.keys(sub)) if (sub[name] !== root[name]) bad.push(entry + ': ' + name);
       }
       process.stdout.write(JSON.stringify(bad));`,
    );
    expect(mismatched).to.deep.equal([]);
  });

  it('the generated schema modules are types only: no compiled file requires them', () => {
    const requiring = compiledFiles(DIST).filter((file) => /require\("[^"]*schema\//.test(readFileSync(file, 'utf8')));
    expect(requiring.map((file) => relative(ROOT, file))).to.deep.equal([]);
  });
});
