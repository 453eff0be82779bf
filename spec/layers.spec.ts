import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { arrowsOf, importCircles, layersFromTable, libraryArrows, moduleFolders, sourceFiles, upwardArrows } from './helpers/layers';

const ROOT = join(__dirname, '..');
const layers = layersFromTable(readFileSync(join(ROOT, 'docs', 'design-notes.md'), 'utf8'));

describe('The layers of lib/', () => {
  it('lib/ itself holds only index.ts: every other module sits in a layer folder', () => {
    const top = sourceFiles(ROOT, 'lib').filter((file) => file.split('/').length === 2);
    expect(top).to.deep.equal(['lib/index.ts']);
  });

  it('the layers table of docs/design-notes.md has one row per folder of lib/, and no other row', () => {
    expect(layers.length, 'rows in the table').to.be.greaterThan(5);
    expect([...layers].sort()).to.deep.equal(moduleFolders(sourceFiles(ROOT, 'lib')));
  });

  it('no module imports from a folder above its own', () => {
    const broken = upwardArrows(layers, libraryArrows(ROOT)).map(({ from, specifier }) => `${from} imports ${specifier}`);
    expect(broken).to.deep.equal([]);
  });

  it('no module is in an import circle, type-only imports included', () => {
    expect(importCircles(sourceFiles(ROOT, 'lib'), libraryArrows(ROOT))).to.deep.equal([]);
  });

  it('the circle check sees a circle closed by a type-only import, and one through a folder index, and no circle in a chain', () => {
    const files = ['lib/acp/a.ts', 'lib/acp/b.ts', 'lib/acp/c.ts', 'lib/chain/index.ts', 'lib/chain/d.ts'];
    const arrows = [
      ...arrowsOf(ROOT, 'lib/acp/a.ts', "import { b } from './b';"),
      ...arrowsOf(ROOT, 'lib/acp/b.ts', "import type { A } from './a';\nimport { c } from './c';"),
      ...arrowsOf(ROOT, 'lib/chain/index.ts', "export { d } from './d';"),
      ...arrowsOf(ROOT, 'lib/chain/d.ts', "const chain = () => require('../chain');"),
    ];
    expect(importCircles(files, arrows)).to.deep.equal([
      ['lib/acp/a.ts imports ./b', 'lib/acp/b.ts imports ./a'],
      ['lib/chain/d.ts imports ../chain', 'lib/chain/index.ts imports ./d'],
    ]);
  });

  it('the check sees an upward import, a dynamic import and a require, and allows imports within a folder', () => {
    const text = [
      "import { Connection } from '../connection/connection';",
      "import type { AcpClient } from '../acp/client';",
      "const lazy = () => import('../chain/proxy');",
      "const required = require('../cli/main');",
      "import { encodeJson } from './ndjson';",
    ].join('\n');
    const found = upwardArrows(layers, arrowsOf(ROOT, 'lib/framing/example.ts', text)).map(({ specifier }) => specifier);
    expect(found).to.deep.equal(['../connection/connection', '../acp/client', '../chain/proxy', '../cli/main']);
  });

  it('an import into a folder the table does not list breaks the layering', () => {
    const found = upwardArrows(layers, arrowsOf(ROOT, 'lib/acp/example.ts', "import { x } from '../misc/x';"));
    expect(found.map(({ toFolder }) => toFolder)).to.deep.equal(['lib/misc/']);
  });
});
