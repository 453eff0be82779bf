/**
 * Run by `npm run build` after `lazy-root-index.ts`: ships the modules a process loads before it
 * can answer as a few compiled modules instead of a file each ({@link bundles}). Node's CommonJS
 * loader pays per file and per `require` site (resolving, `stat` and `realpath` calls, reading, the
 * package scope lookup, a compile call): a passthrough proxy loaded 42 files and a conductor 59
 * before they could answer; now 5 and 8.
 *
 * - `dist/lib/core.js`: the connection layer (the eager folders, see `eager-folders.ts`) and what
 *   every chain component on stdio loads with it ({@link WITH_THE_LAYER}).
 * - `dist/lib/conduct.js`: what `acp-wire conduct` loads once it has spawned its components
 *   ({@link CONDUCT}); nothing else loads it but the CLI and the `Conductor` class.
 * - `dist/lib/package.json` ends each package scope lookup one folder up ({@link writePackageScope}).
 * - The bundles are ASCII text, comments included ({@link escapeNonAscii}).
 *
 * Each bundled module keeps its own scope and runs when it is first read, as before: a bundle
 * exports one getter per module id (`"connection/connection"`), and every other compiled file's
 * `require("../connection/connection")` becomes `require("../core")["connection/connection"]`, so
 * there is still one copy of each module in a process, whichever entry point loaded it. The
 * declarations (`.d.ts`) are untouched; the bundled modules' `.js` and `.js.map` files are removed,
 * so a `require` this script missed fails loudly instead of loading a second copy. Each bundle's
 * `.js.map` maps back to the TypeScript sources. Some modules of the eager folders stay files of
 * their own ({@link OWN_FILES}). Fails when a listed module is not in the build (renamed, or this
 * build was bundled already), and when a compiled file still requires a removed one.
 *
 * @packageDocumentation
 */
import { build, type Plugin } from 'esbuild';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { EAGER_FOLDERS } from './eager-folders';

const DIST = join(__dirname, '..', 'dist');
const LIB = join(DIST, 'lib');

/** Compiled modules of the eager folders that stay files of their own. */
const OWN_FILES: ReadonlySet<string> = new Set([
  // The entry point acp-wire/connection: an ES module importer reads its names from its getters.
  'connection/index',
  // What `acp-wire conduct` loads before it spawns its components (the command line error class).
  'jsonrpc/errors',
  // Finds package.json from its own directory.
  'support/package-version',
]);

/**
 * Modules above the connection layer that the components of a chain load to answer their first
 * message on stdio: a passthrough proxy needs all of them, the conductor and an agent some.
 */
const WITH_THE_LAYER: readonly string[] = [
  'transports/stdio',
  'acp/initialize',
  'acp/negotiation',
  'chain/proxy',
  'chain/forwarding',
  'chain/successor',
  'trace/context',
  'mcp/protocol',
];

/**
 * What `acp-wire conduct` on stdio loads after its early spawn (`lib/cli/early-spawn.ts`, whose
 * modules stay files: they load before anything else) to run a chain.
 */
const CONDUCT: readonly string[] = [
  'cli/main',
  'cli/arguments',
  'cli/commands',
  'cli/subcommand',
  'cli/conduct',
  'cli/drain',
  'cli/shutdown',
  'server/loopback',
  'server/drain-timeout',
  'chain/conductor',
  'chain/conductor-trace',
  'chain/chain-component',
  'chain/deadline',
  'chain/listener-defaults',
  'chain/url-components',
  'transports/child-process',
  'transports/url',
];

/** Every compiled `.js` file under `dir`. */
function compiledFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return compiledFiles(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

/** A compiled module's id: its path under dist/lib, `/`-separated, without `.js`. */
const idOf = (file: string): string => relative(LIB, file).split(sep).join('/').replace(/\.js$/, '');

/** The id of the module `require(request)` loads from a file in `dir` (a relative request). */
const idOfRequest = (dir: string, request: string): string => idOf(resolve(dir, request.endsWith('.js') ? request : `${request}.js`));

/** The bundles, by file under dist/lib (without `.js`): the ids of the modules each holds. */
function bundles(): Map<string, ReadonlySet<string>> {
  const layer = EAGER_FOLDERS.flatMap((folder) => compiledFiles(join(LIB, folder)).map(idOf)).filter((id) => !OWN_FILES.has(id));
  const result = new Map<string, ReadonlySet<string>>([
    ['core', new Set([...layer, ...WITH_THE_LAYER])],
    ['conduct', new Set(CONDUCT)],
  ]);
  for (const [file, ids] of result) {
    for (const id of ids) {
      if (!existsSync(join(LIB, `${id}.js`))) {
        throw new Error(
          `bundle-core: ${id}.js (for ${file}.js) is not in the build: renamed, or was this build already bundled? (run tsc first)`,
        );
      }
    }
  }
  return result;
}

/**
 * Keeps every import that is not a bundled module outside the bundle, as a path from dist/lib,
 * required from one place in the bundle: a small module of the bundle (`module.exports =
 * require("./jsonrpc/errors")`, run on first use like the others) that every bundled module
 * importing it shares. Node caches a relative `require` by the requiring file's folder only when
 * that call loaded the file, so a file another module loaded first would be resolved again at
 * each of the bundle's modules that requires it.
 */
function keepOthersExternal(bundled: ReadonlySet<string>): Plugin {
  const OUTSIDE = 'outside-the-bundle';
  return {
    name: 'keep-others-external',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^\.\.?\// }, (args) => {
        if (args.namespace === OUTSIDE) return { path: args.path, external: true };
        const id = idOfRequest(args.resolveDir, args.path);
        if (bundled.has(id)) return undefined;
        if (id.startsWith('..')) throw new Error(`bundle-core: ${args.importer} requires ${args.path}, outside dist/lib`);
        return { path: `./${id}`, namespace: OUTSIDE };
      });
      esbuild.onLoad({ filter: /.*/, namespace: OUTSIDE }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(args.path)});`,
        loader: 'js',
        resolveDir: LIB,
      }));
    },
  };
}

/**
 * Keeps each module's top-level declarations as they are: esbuild turns a bundled module's top-level
 * `const` and `class` into `var` (on purpose, and with no option), which V8 optimizes less well (a
 * round trip in process took ~2-3% more instructions). Inside a function of its own they are no
 * longer top-level; the module runs in that function's scope, as Node's CommonJS wrapper runs it.
 * Added on the first and last lines, so the module's source map still holds.
 */
function keepDeclarations(bundled: ReadonlySet<string>): Plugin {
  return {
    name: 'keep-declarations',
    setup(esbuild) {
      esbuild.onLoad({ filter: /\.js$/ }, (args) => {
        if (!bundled.has(idOf(args.path))) return undefined;
        const text = readFileSync(args.path, 'utf8');
        const map = text.lastIndexOf('\n//# sourceMappingURL=');
        if (map < 0) throw new Error(`bundle-core: ${args.path} has no source map comment`);
        const contents = `(function () {${text.slice(0, map)}\n}).call(this);${text.slice(map)}`;
        return { contents, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

/** Builds dist/lib/`file`.js: a getter per bundled module, which runs the module on first read. */
async function bundle(file: string, bundled: ReadonlySet<string>): Promise<void> {
  const getters = [...bundled].map(
    (id) => `Object.defineProperty(exports, ${JSON.stringify(id)}, { enumerable: true, get: () => require("./${id}") });`,
  );
  const result = await build({
    stdin: { contents: getters.join('\n'), resolveDir: LIB, sourcefile: `${file}-getters.js`, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20.19',
    outfile: join(LIB, `${file}.js`),
    sourcemap: 'linked',
    sourcesContent: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [keepOthersExternal(bundled), keepDeclarations(bundled)],
  });
  if (result.errors.length > 0 || result.warnings.length > 0) throw new Error('bundle-core: esbuild reported problems (above)');
  escapeNonAscii(join(LIB, `${file}.js`));
}

/**
 * Makes a bundle ASCII-only. esbuild escapes every other character in the code it writes (its
 * default `charset`) but not in the comments it keeps; one `…` in a comment makes Node decode the
 * whole file from UTF-8 and V8 scan it as two-byte text. `\u{2026}` reads the same in a comment
 * (and means the same in a string). Characters on a line change, lines do not: the source map
 * still holds.
 */
function escapeNonAscii(file: string): void {
  const text = readFileSync(file, 'utf8');
  writeFileSync(
    file,
    text.replace(/[\u0080-\u{10ffff}]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`),
  );
}

/** A relative `require("…")` or `require('…')` call; group 2 is the path. */
const RELATIVE_REQUIRE = /require\((["'])(\.\.?\/[^"']+)\1\)/g;

/**
 * `require("<path to a bundled module>")` in `file` (a bundle too: its requires of the other
 * bundle's modules), as `require("<path to its bundle>")["<id>"]`.
 */
function rewriteRequires(file: string, bundleOf: ReadonlyMap<string, string>): void {
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(RELATIVE_REQUIRE, (call, _quote: string, path: string) => {
    const id = idOfRequest(dirname(file), path);
    const target = bundleOf.get(id);
    if (target === undefined) return call;
    let toBundle = relative(dirname(file), join(LIB, target)).split(sep).join('/');
    if (!toBundle.startsWith('.')) toBundle = `./${toBundle}`;
    return `require("${toBundle}")[${JSON.stringify(id)}]`;
  });
  if (rewritten !== text) writeFileSync(file, rewritten);
}

/** Throws if a compiled file still requires a file that does not exist. */
function checkRequires(): void {
  for (const file of compiledFiles(DIST)) {
    for (const [, , path] of readFileSync(file, 'utf8').matchAll(RELATIVE_REQUIRE)) {
      const target = resolve(dirname(file), path!);
      const found = [target, `${target}.js`, join(target, 'index.js'), `${target}.json`].some((candidate) => existsSync(candidate));
      if (!found) throw new Error(`bundle-core: ${relative(DIST, file)} requires ${path}, which is not in the build`);
    }
  }
}

/**
 * Writes dist/lib/package.json, `{ "type": "commonjs" }`: what the package's own package.json says
 * already, found in the folder above instead of at the package root. Node looks up the package
 * scope (the nearest package.json) of each file it loads and of each file that calls `require`,
 * resolving one path per folder on the way up.
 */
function writePackageScope(): void {
  writeFileSync(join(LIB, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
}

async function main(): Promise<void> {
  const all = bundles();
  const bundleOf = new Map([...all].flatMap(([file, ids]) => [...ids].map((id) => [id, file] as const)));
  for (const [file, ids] of all) await bundle(file, ids);
  for (const id of bundleOf.keys()) for (const suffix of ['.js', '.js.map']) rmSync(join(LIB, `${id}${suffix}`), { force: true });
  for (const file of compiledFiles(DIST)) rewriteRequires(file, bundleOf);
  checkRequires();
  writePackageScope();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
