/**
 * The names each entry point of the package exports, read from the sources with the TypeScript
 * checker (values and types alike), for the package spec's committed list of the public surface.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

/** An entry point: its import specifier (`acp-wire`, `acp-wire/mcp`) and the source it is compiled from. */
export interface EntryPoint {
  readonly specifier: string;
  readonly source: string;
}

/** The package's entry points, from the `exports` map of its package.json (`./package.json` left out). */
export function entryPoints(root: string): EntryPoint[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
  return Object.entries(manifest.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => {
      const compiled = (target as { default: string }).default;
      const source = compiled.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts');
      return { specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`, source };
    });
}

/** Each entry point's exported names, sorted, by specifier. */
export function exportedNames(root: string, entries: readonly EntryPoint[]): Record<string, string[]> {
  const files = entries.map((entry) => join(root, entry.source));
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  const program = ts.createProgram(files, { ...parsed?.options, noEmit: true });
  const checker = program.getTypeChecker();
  const names: Record<string, string[]> = {};
  for (const entry of entries) {
    const file = program.getSourceFile(join(root, entry.source));
    const module = file && checker.getSymbolAtLocation(file);
    if (!module) throw new Error(`no module for ${entry.source}`);
    names[entry.specifier] = checker
      .getExportsOfModule(module)
      .map((symbol) => symbol.name)
      .sort();
  }
  return names;
}
