/**
 * The published package: what `npm pack` ships, and that a consumer can use it as the docs say.
 * Needs the build (a spec run alone builds when the compiled files are missing or stale).
 */
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entryPoints, exportedNames } from './helpers/entry-points';
import { ROOT, useBuild } from './helpers/processes';

interface PackedFile {
  path: string;
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  scripts: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
  dependencies?: Record<string, string>;
};

/** Packs the package (without lifecycle scripts: the build is already there) into `dir`. */
function pack(dir: string): { tarball: string; files: string[] } {
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' });
  const [result] = JSON.parse(out) as [{ filename: string; files: PackedFile[] }];
  return { tarball: join(dir, result.filename), files: result.files.map((file) => file.path) };
}

/** Every file path the `exports` map points at. */
function exportTargets(): string[] {
  return Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target)));
}

describe('the package', function () {
  this.timeout(60000);
  let dir: string;
  let packed: { tarball: string; files: string[] };
  useBuild();
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'acp-wire-package-'));
    packed = pack(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('ships every file its exports map names', () => {
    for (const target of exportTargets()) expect(packed.files, target).to.include(target.replace(/^\.\//, ''));
  });

  it('ships source maps that carry their sources (the .ts files are not shipped)', () => {
    const maps = packed.files.filter((file) => file.endsWith('.map'));
    expect(maps).to.not.have.length(0);
    expect(packed.files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).to.deep.equal([]);
    for (const file of maps) {
      const map = JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { sources: string[]; sourcesContent?: unknown[] };
      expect(map.sourcesContent, file).to.have.length(map.sources.length);
      for (const content of map.sourcesContent!) expect(content, file).to.be.a('string').and.not.equal('');
    }
  });

  it('resolves acp-wire/conformance-agent to the compiled agent through its own exports map', () => {
    expect(require.resolve('acp-wire/conformance-agent')).to.equal(join(ROOT, 'dist', 'examples', 'conformance-agent.js'));
    const agentModule = require('acp-wire/conformance-agent') as { serveConformanceAgent?: unknown };
    expect(agentModule.serveConformanceAgent).to.be.a('function');
  });

  describe('installed from its tarball', () => {
    let project: string;
    before(() => {
      project = join(dir, 'consumer');
      const installed = join(project, 'node_modules', 'acp-wire');
      mkdirSync(installed, { recursive: true });
      writeFileSync(join(project, 'package.json'), '{"name":"consumer","version":"1.0.0","private":true}\n');
      execFileSync('tar', ['-xzf', packed.tarball, '-C', installed, '--strip-components=1']);
      // The runtime dependencies and theirs, as `npm install` would place them (offline).
      const pending = Object.keys(manifest.dependencies ?? {});
      for (let dependency = pending.pop(); dependency !== undefined; dependency = pending.pop()) {
        const target = join(project, 'node_modules', dependency);
        if (existsSync(target)) continue;
        cpSync(join(ROOT, 'node_modules', dependency), target, { recursive: true });
        const own = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
        pending.push(...Object.keys(own.dependencies ?? {}));
      }
    });

    /** Runs a script with Node in the consumer project and returns its stdout. */
    function runInConsumer(args: string[]): string {
      const result = spawnSync(process.execPath, args, { cwd: project, encoding: 'utf8' });
      expect(result.stderr).to.equal('');
      expect(result.status).to.equal(0);
      return result.stdout;
    }

    const SERVE_AND_INITIALIZE = `
      const [client, agent] = createConnectionPair();
      serveConformanceAgent(agent);
      client.sendRequest('initialize', { protocolVersion: 2, info: { name: 'consumer', version: '1' } }).then(async (result) => {
        process.stdout.write(JSON.stringify(result.info));
        await client.close();
      });`;

    it('serves the conformance agent with serveConformanceAgent imported from acp-wire/conformance-agent (require)', () => {
      const script = `const { serveConformanceAgent } = require('acp-wire/conformance-agent');
        const { createConnectionPair } = require('acp-wire');${SERVE_AND_INITIALIZE}`;
      expect(runInConsumer(['-e', script])).to.equal(`{"name":"acp-wire-conformance-agent","version":"${manifest.version}"}`);
    });

    it('serves the conformance agent with serveConformanceAgent imported from acp-wire/conformance-agent (import)', () => {
      const script = `import { serveConformanceAgent } from 'acp-wire/conformance-agent';
        import { createConnectionPair } from 'acp-wire';${SERVE_AND_INITIALIZE}`;
      expect(runInConsumer(['--input-type=module', '-e', script])).to.equal(
        `{"name":"acp-wire-conformance-agent","version":"${manifest.version}"}`,
      );
    });

    it('loads every entry point of its exports map by require and by import, with the same names', () => {
      const specifiers = entryPoints(ROOT).map((entry) => entry.specifier);
      const required = JSON.parse(
        runInConsumer([
          '-e',
          `process.stdout.write(JSON.stringify(${JSON.stringify(specifiers)}.map((s) => Object.keys(require(s)).sort())))`,
        ]),
      ) as string[][];
      const imported = JSON.parse(
        runInConsumer([
          '--input-type=module',
          '-e',
          `const all = await Promise.all(${JSON.stringify(specifiers)}.map((s) => import(s)));
           process.stdout.write(JSON.stringify(all.map((m) => Object.keys(m).filter((k) => !['default', 'module.exports', '__esModule'].includes(k)).sort())));`,
        ]),
      ) as string[][];
      expect(imported).to.deep.equal(required);
      for (const [index, names] of required.entries()) expect(names, specifiers[index]).to.not.have.length(0);
    });

    it('ships type declarations for both entry points', () => {
      expect(existsSync(join(project, 'node_modules', 'acp-wire', 'dist', 'lib', 'index.d.ts'))).to.equal(true);
      expect(existsSync(join(project, 'node_modules', 'acp-wire', 'dist', 'examples', 'conformance-agent.d.ts'))).to.equal(true);
    });

    it('runs its acp-wire command', () => {
      expect(runInConsumer([join('node_modules', 'acp-wire', 'dist', 'bin', 'acp-wire.js'), '--version'])).to.equal(
        `${manifest.version}\n`,
      );
    });

    it('runs acp-wire check, whose schema checks find the official schemas and ajv in the package', () => {
      const cli = join('node_modules', 'acp-wire', 'dist', 'bin', 'acp-wire.js');
      const agent = `node ${join('node_modules', 'acp-wire', 'dist', 'examples', 'conformance-agent.js')}`;
      const report = JSON.parse(runInConsumer([cli, 'check', '--json', '--only', 'initialize', '--only', 'sessions', agent])) as {
        results: { id: string; status: string; message?: string }[];
      };
      expect(report.results.find((result) => result.id === 'initialize.capabilities')).to.include({
        status: 'pass',
        message: 'v2 InitializeResponse',
      });
      expect(report.results.filter((result) => result.status !== 'pass')).to.deep.equal([]);
    });
  });

  describe('npm pack (prepack)', () => {
    it('empties dist/ before building, so a file from a deleted source is not shipped', () => {
      expect(manifest.scripts.prepack).to.match(/^npm run clean && npm run build$/);
      const project = join(dir, 'clean-check');
      mkdirSync(join(project, 'dist', 'lib'), { recursive: true });
      writeFileSync(join(project, 'dist', 'lib', 'stale.js'), '');
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'clean-check', scripts: { clean: manifest.scripts.clean } }));
      execFileSync('npm', ['run', 'clean', '--silent'], { cwd: project });
      expect(existsSync(join(project, 'dist'))).to.equal(false);
    });
  });
});

/** The entry points whose names the root re-exports: the light entries of what most programs use. */
const IN_ROOT = ['acp-wire/connection', 'acp-wire/acp', 'acp-wire/chain', 'acp-wire/transports'];

describe('the public surface', function () {
  this.timeout(60000);
  const committed = JSON.parse(readFileSync(join(ROOT, 'spec', 'fixtures', 'public-names.json'), 'utf8')) as Record<string, string[]>;
  let names: Record<string, string[]>;
  before(() => {
    names = exportedNames(ROOT, entryPoints(ROOT));
  });

  it('each entry point exports exactly the names spec/fixtures/public-names.json lists for it', () => {
    expect(names).to.deep.equal(committed);
  });

  it('exports each name from one subpath at most', () => {
    const owners = new Map<string, string[]>();
    for (const [entry, list] of Object.entries(names)) {
      if (entry === 'acp-wire') continue;
      for (const name of list) owners.set(name, [...(owners.get(name) ?? []), entry]);
    }
    expect([...owners].filter(([, entries]) => entries.length > 1)).to.deep.equal([]);
  });

  it('the root re-exports the four light entries whole and no name of another subpath', () => {
    const root = new Set(names['acp-wire']);
    for (const entry of IN_ROOT)
      expect(
        names[entry]!.filter((name) => !root.has(name)),
        entry,
      ).to.deep.equal([]);
    const elsewhere = Object.entries(names).filter(([entry]) => entry !== 'acp-wire' && !IN_ROOT.includes(entry));
    expect(elsewhere.flatMap(([entry, list]) => list.filter((name) => root.has(name)).map((name) => `${entry}: ${name}`))).to.deep.equal(
      [],
    );
  });

  it('builds the API reference and the type paths from every entry point', () => {
    const typedoc = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as { entryPoints: string[] };
    const sources = entryPoints(ROOT)
      .map((entry) => entry.source)
      .filter((source) => source.startsWith('lib/'));
    expect([...typedoc.entryPoints].sort()).to.deep.equal([...sources].sort());
    const typesVersions = (manifest as unknown as { typesVersions: Record<string, Record<string, string[]>> }).typesVersions['*']!;
    const subpaths = entryPoints(ROOT)
      .filter((entry) => entry.specifier !== 'acp-wire')
      .map((entry) => entry.specifier.slice('acp-wire/'.length));
    expect(Object.keys(typesVersions).sort()).to.deep.equal(subpaths.sort());
  });
});
