/**
 * The layers of `lib/` as `docs/design-notes.md` lists them, and the imports between its folders:
 * what `spec/layers.spec.ts` holds against each other.
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
      return { from: file, fromFolder, toFolder: `${dirname(target)}/`, specifier: fileName };
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
