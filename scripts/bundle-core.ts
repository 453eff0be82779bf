/**
 * Run by `npm run build` after `lazy-root-index.ts`: ships the connection layer (the compiled
 * modules of the eager folders, see `eager-folders.ts`) as one module, `dist/lib/core.js`, instead
 * of a file each. Every process that requires acp-wire loads all of them, and Node's CommonJS
 * loader pays per file (resolving, `stat` and `realpath` calls, reading, the package scope lookup,
 * a compile call): a passthrough proxy loaded 42 files and a conductor 59 before it could answer.
 *
 * Each bundled module keeps its own scope and runs when it is first read, as before: `core.js`
 * exports one getter per module id (`"connection/connection"`), and every other compiled file's
 * `require("../connection/connection")` becomes `require("../core")["connection/connection"]`, so
 * there is still one copy of each module in a process, whichever entry point loaded it. The
 * declarations (`.d.ts`) are untouched; the bundled modules' `.js` and `.js.map` files are removed,
 * so a `require` this script missed fails loudly instead of loading a second copy. `core.js.map`
 * maps back to the TypeScript sources. Some modules stay files of their own ({@link OWN_FILES}).
 * Fails on a second run over the same build (nothing left to bundle), and when a compiled file
 * still requires a removed one.
 *
 * @packageDocumentation
 */
import { build, type Plugin } from 'esbuild';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { EAGER_FOLDERS } from './eager-folders';

const DIST = join(__dirname, '..', 'dist');
const LIB = join(DIST, 'lib');
const CORE = join(LIB, 'core.js');

/** Compiled modules of the eager folders that stay files of their own. */
const OWN_FILES: ReadonlySet<string> = new Set([
  // The entry point acp-wire/connection: an ES module importer reads its names from its getters.
  'connection/index',
  // What `acp-wire conduct` loads before it spawns its components (the command line error class).
  'jsonrpc/errors',
  // Finds package.json from its own directory.
  'support/package-version',
]);

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

/** The ids of the modules that go into core.js. */
function bundledIds(): string[] {
  const ids = EAGER_FOLDERS.flatMap((folder) => compiledFiles(join(LIB, folder)).map(idOf)).filter((id) => !OWN_FILES.has(id));
  if (ids.length === 0) throw new Error('bundle-core: nothing to bundle: was this build already bundled? (run tsc first)');
  return ids.sort();
}

/** Keeps every import that is not a bundled module outside the bundle, as a path from dist/lib. */
function keepOthersExternal(bundled: ReadonlySet<string>): Plugin {
  return {
    name: 'keep-others-external',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^\.\.?\// }, (args) => {
        const id = idOfRequest(args.resolveDir, args.path);
        if (bundled.has(id)) return undefined;
        if (id.startsWith('..')) throw new Error(`bundle-core: ${args.importer} requires ${args.path}, outside dist/lib`);
        return { path: `./${id}`, external: true };
      });
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

/** Builds core.js: a getter per bundled module, which runs the module on first read. */
async function bundle(bundled: ReadonlySet<string>): Promise<void> {
  const getters = [...bundled].map(
    (id) => `Object.defineProperty(exports, ${JSON.stringify(id)}, { enumerable: true, get: () => require("./${id}") });`,
  );
  const result = await build({
    stdin: { contents: getters.join('\n'), resolveDir: LIB, sourcefile: 'core-getters.js', loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20.19',
    outfile: CORE,
    sourcemap: 'linked',
    sourcesContent: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [keepOthersExternal(bundled), keepDeclarations(bundled)],
  });
  if (result.errors.length > 0 || result.warnings.length > 0) throw new Error('bundle-core: esbuild reported problems (above)');
}

/** `require("<path to a bundled module>")` in `file`, as `require("<path to core>")["<id>"]`. */
function rewriteRequires(file: string, bundled: ReadonlySet<string>): void {
  const text = readFileSync(file, 'utf8');
  let toCore = relative(dirname(file), CORE).split(sep).join('/').replace(/\.js$/, '');
  if (!toCore.startsWith('.')) toCore = `./${toCore}`;
  const rewritten = text.replace(/require\("(\.\.?\/[^"]+)"\)/g, (call, path: string) => {
    const id = idOfRequest(dirname(file), path);
    return bundled.has(id) ? `require("${toCore}")[${JSON.stringify(id)}]` : call;
  });
  if (rewritten !== text) writeFileSync(file, rewritten);
}

/** Throws if a compiled file still requires a file that does not exist. */
function checkRequires(): void {
  for (const file of compiledFiles(DIST)) {
    for (const [, path] of readFileSync(file, 'utf8').matchAll(/require\("(\.\.?\/[^"]+)"\)/g)) {
      const target = resolve(dirname(file), path!);
      const found = [target, `${target}.js`, join(target, 'index.js'), `${target}.json`].some((candidate) => existsSync(candidate));
      if (!found) throw new Error(`bundle-core: ${relative(DIST, file)} requires ${path}, which is not in the build`);
    }
  }
}

async function main(): Promise<void> {
  const bundled = new Set(bundledIds());
  await bundle(bundled);
  for (const id of bundled) for (const suffix of ['.js', '.js.map']) rmSync(join(LIB, `${id}${suffix}`), { force: true });
  for (const file of compiledFiles(DIST)) if (file !== CORE) rewriteRequires(file, bundled);
  checkRequires();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
