/**
 * Run by `npm run build` after `tsc`: makes the compiled root index (`dist/lib/index.js`) load the
 * modules above the connection layer on first use of one of their exports, not when `acp-wire` is
 * required. `lib/index.ts` and its declarations (`dist/lib/index.d.ts`) are not touched: the
 * exports keep their names, types and values.
 *
 * `tsc` compiles each `export { X } from './m'` to one `var m_1 = require("./m");` line and one
 * getter per name (`get: function () { return m_1.X; }`). This script replaces each such `require`
 * line outside the eager folders with a `lazyModule(...)` line that requires the module when a
 * getter first reads from it. The getters keep the shape Node's CommonJS export detection reads,
 * so `import { X } from 'acp-wire'` from an ES module still sees every name (an ES module's
 * import reads every export, so it loads every module: ES modules use the subpath entries).
 * The root takes the names of the subpath entries above the connection layer with
 * `export * from './acp/index'`, which `tsc` compiles to one `__exportStar(require(...))` line
 * that would load the whole entry: that line becomes, on one line, the entry's own `require`
 * lines made lazy and its getters, read from the entry's compiled index. One line is replaced by
 * one line, so the source map still holds. Fails on any line it does not recognise, so a change in
 * what `tsc` emits cannot pass unnoticed.
 *
 * @packageDocumentation
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { EAGER_FOLDERS } from './eager-folders';

const HELPER = 'function lazyModule(load) { let loaded; return new Proxy({}, { get: (_, key) => (loaded ??= load())[key] }); }';

const DIST = join(__dirname, '..', 'dist', 'lib');

/**
 * The compiled subpath entry `./<entry>/index` (an `export { X } from './m'` list, which is all a
 * subpath index holds) as one line of lazy modules and getters, its paths made relative to the root.
 */
function lazyEntry(entry: string): string {
  const prefix = entry.replace(/\W/g, '_');
  const out: string[] = [];
  for (const line of readFileSync(join(DIST, entry, 'index.js'), 'utf8').split('\n')) {
    const module = /^var (\w+) = require\("(\.\.?\/[\w/.-]+)"\);$/.exec(line);
    const getter =
      /^Object\.defineProperty\(exports, "(\w+)", \{ enumerable: true, get: function \(\) \{ return (\w+)\.(\w+); \} \}\);$/.exec(line);
    if (module) {
      const path = `./${posix.join(entry, module[2]!)}`;
      out.push(`var ${prefix}__${module[1]} = lazyModule(() => require("${path}"));`);
    } else if (getter) {
      out.push(
        `Object.defineProperty(exports, "${getter[1]}", { enumerable: true, get: function () { return ${prefix}__${getter[2]}.${getter[3]}; } });`,
      );
    } else if (line.includes('require(') || line.includes('__exportStar')) {
      throw new Error(`lazy-root-index: unexpected line in the compiled ${entry}/index.js: ${line}`);
    }
  }
  return out.join(' ');
}

function rewrite(text: string): string {
  const lines = text.split('\n');
  let replaced = 0;
  const out = lines.map((line) => {
    const match = /^var (\w+) = require\("\.\/([\w-]+)\/([\w/-]+)"\);$/.exec(line);
    if (match) {
      const [, name, folder, rest] = match;
      if (EAGER_FOLDERS.includes(folder!)) return line;
      replaced++;
      return `var ${name} = lazyModule(() => require("./${folder}/${rest}"));`;
    }
    // `export * from './connection/index'`: the eager layers, as one re-export.
    const star = /^__exportStar\(require\("\.\/([\w/-]+)\/index"\), exports\);$/.exec(line);
    if (star && EAGER_FOLDERS.includes(star[1]!)) return line;
    if (star) {
      replaced++;
      return lazyEntry(star[1]!);
    }
    if (line.includes('require(')) throw new Error(`lazy-root-index: unexpected line in the compiled index: ${line}`);
    return line;
  });
  if (replaced === 0) throw new Error('lazy-root-index: found no require line to make lazy: was the index already rewritten?');
  const at = out.findIndex((line) => line.startsWith('var '));
  out.splice(at, 0, HELPER);
  // The helper's line shifts what follows by one: join it to the first line it precedes instead.
  out[at] = `${out[at]} ${out.splice(at + 1, 1)[0]}`;
  return out.join('\n');
}

const file = join(DIST, 'index.js');
writeFileSync(file, rewrite(readFileSync(file, 'utf8')));
