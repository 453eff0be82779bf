/**
 * The layers of `lib/` as `docs/design-notes.md` lists them, and the imports between its modules:
 * what `spec/layers.spec.ts` holds against each other (no arrow up, no circle).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** One import of a module in `lib/`: the importing file and the folder it points at. */
export interface LayerArrow {
  /** The importing file, relative to the project root (`lib/acp/agent.ts`). */
  readonly from: string;
  /** The folder of the importing file (`lib/acp/`). */
  readonly fromFolder: string;
  /** The folder of the imported module (`lib/connection/`). */
  readonly toFolder: string;
  /** The imported module's path as written, resolved from the project root: without `.ts`, or a folder's for its index. */
  readonly to: string;
  /** The import specifier as written. */
  readonly specifier: string;
}

/**
 * The folders of the layers table, top layer first: every row whose first cell is a backticked
 * path under `lib/` ending in `/`.
 */
export function layersFromTable(markdown: string): string[] {
  const section = markdown.split(/^## Layers$/m)[1]?.split(/^## /m)[0] ?? '';
  return [...section.matchAll(/^\|\s*`(lib\/[^`]*\/)`\s*\|/gm)].map((match) => match[1]!);
}

/** Every `.ts` file under `dir`, relative to `root`, with forward slashes. */
export function sourceFiles(root: string, dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) files.push(...sourceFiles(root, path));
    else if (entry.name.endsWith('.ts')) files.push(path);
  }
  return files;
}

/** The folders that hold at least one module (`lib/` itself excluded: it holds only the index). */
export function moduleFolders(files: readonly string[]): string[] {
  return [...new Set(files.map((file) => `${dirname(file)}/`))].filter((folder) => folder !== 'lib/').sort();
}

/** The relative imports of one module (static, dynamic, `require`, `export … from`, type-only). */
export function arrowsOf(root: string, file: string, text: string): LayerArrow[] {
  const info = ts.preProcessFile(text, true, true);
  const fromFolder = `${dirname(file)}/`;
  return info.importedFiles
    .filter(({ fileName }) => fileName.startsWith('.'))
    .map(({ fileName }) => {
      const target = relative(root, resolve(root, dirname(file), fileName))
        .split('\\')
        .join('/');
      return { from: file, fromFolder, toFolder: `${dirname(target)}/`, to: target, specifier: fileName };
    });
}

/**
 * The arrows that break the layering: into a folder above the importer's, or into a folder the
 * table does not list. Arrows within a folder, and from `lib/index.ts`, are always allowed.
 */
export function upwardArrows(layers: readonly string[], arrows: readonly LayerArrow[]): LayerArrow[] {
  const rank = new Map(layers.map((folder, index) => [folder, index]));
  return arrows.filter((arrow) => {
    if (arrow.fromFolder === 'lib/' || arrow.fromFolder === arrow.toFolder) return false;
    const from = rank.get(arrow.fromFolder);
    const to = rank.get(arrow.toFolder);
    return from === undefined || to === undefined || to <= from;
  });
}

/** Every import arrow of every module under `lib/` of the project at `root`. */
export function libraryArrows(root: string): LayerArrow[] {
  return sourceFiles(root, 'lib').flatMap((file) => arrowsOf(root, file, readFileSync(join(root, file), 'utf8')));
}

/** The module file an arrow points at, among `files`: `to.ts`, else `to/index.ts`; `undefined` for none of them. */
function targetFile(arrow: LayerArrow, files: ReadonlySet<string>): string | undefined {
  for (const candidate of [`${arrow.to}.ts`, `${arrow.to}/index.ts`, arrow.to]) if (files.has(candidate)) return candidate;
  return undefined;
}

/**
 * The import circles among `files` (every kind of import counts: static, dynamic, `require`,
 * `export … from`, type-only): each group of modules that reach one another through `arrows`, as
 * the arrows inside it (`from imports specifier`), sorted. Empty when the imports form no circle.
 */
export function importCircles(files: readonly string[], arrows: readonly LayerArrow[]): string[][] {
  const known = new Set(files);
  const edges = new Map<string, { file: string; arrow: LayerArrow }[]>(files.map((file) => [file, []]));
  for (const arrow of arrows) {
    const file = targetFile(arrow, known);
    if (file !== undefined) edges.get(arrow.from)?.push({ file, arrow });
  }
  return stronglyConnected(files, (file) => edges.get(file)!.map((edge) => edge.file))
    .filter((group) => group.length > 1 || edges.get(group[0]!)!.some((edge) => edge.file === group[0]))
    .map((group) => {
      const members = new Set(group);
      return group
        .flatMap((file) => edges.get(file)!.filter((edge) => members.has(edge.file)))
        .map(({ arrow }) => `${arrow.from} imports ${arrow.specifier}`)
        .sort();
    })
    .sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The strongly connected groups of a graph (Tarjan's algorithm, iterative: deep import chains do not overflow the stack). */
function stronglyConnected(nodes: readonly string[], next: (node: string) => readonly string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: string; edges: readonly string[]; at: number }[] = [];
    const enter = (node: string): void => {
      index.set(node, counter);
      low.set(node, counter++);
      stack.push(node);
      onStack.add(node);
      work.push({ node, edges: next(node), at: 0 });
    };
    enter(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.at < frame.edges.length) {
        const target = frame.edges[frame.at++]!;
        if (!index.has(target)) enter(target);
        else if (onStack.has(target)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== frame.node);
      groups.push(group.sort());
    }
  }
  return groups;
}
