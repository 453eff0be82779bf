/**
 * No function in lib/ has a body over 60 lines: a long function is split by concept (see
 * /docs/design-notes.md and the style guide's "a function under ~40 lines").
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { longFunctions } from './helpers/function-size';
import { sourceFiles } from './helpers/layers';

const ROOT = join(__dirname, '..');
const MAX_LINES = 60;

/** A function whose body spans `lines` lines, braces included. */
function functionOf(name: string, lines: number): string {
  const statements = Array.from({ length: lines - 2 }, (_, index) => `  const v${index} = ${index};`);
  return [`function ${name}() {`, ...statements, '}'].join('\n');
}

describe('Function size in lib/', () => {
  it(`no function, method or arrow in lib/ has a body over ${MAX_LINES} lines`, () => {
    const files = sourceFiles(ROOT, 'lib');
    expect(files.length, 'modules read').to.be.greaterThan(50);
    const found = files.flatMap((file) => longFunctions(file, readFileSync(join(ROOT, file), 'utf8'), MAX_LINES));
    expect(found.map(({ file, where, lines }) => `${file}: ${where} spans ${lines} lines`)).to.deep.equal([]);
  });

  it('the check names a function, a method and an arrow over the limit, and passes one at the limit', () => {
    const method = functionOf('run', 62).replace(/^function /, '');
    const arrow = functionOf('x', 70).replace(/^function x\(\) /, 'const handler = () => ');
    const text = [functionOf('atTheLimit', MAX_LINES), functionOf('tooLong', MAX_LINES + 1), `class Server {\n${method}\n}`, arrow].join(
      '\n',
    );
    const found = longFunctions('fixture.ts', text, MAX_LINES).map(
      ({ where, lines }) => `${where.replace(/ \(line \d+\)$/, '')}: ${lines}`,
    );
    expect(found).to.deep.equal(['tooLong: 61', 'Server#run: 62', 'handler: 70']);
  });
});
