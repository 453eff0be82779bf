/**
 * The sizes a reader can carry: the guides in docs/, the benchmark notes and the CHANGELOG's
 * lines. A guide says what is (history stays in git), so these limits hold as the project grows.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

/** Bytes (1 KB = 1,000 bytes) for all of docs/*.md together, for any one of them, and for two pages with a tighter budget. */
const DOCS_TOTAL_MAX_BYTES = 200_000;
const GUIDE_MAX_BYTES = 30_000;
const RESUME_GUIDE_MAX_BYTES = 10_000;
const BENCH_README_MAX_BYTES = 20_000;
/** Characters (code points) in one line of CHANGELOG.md: one entry is one line. */
const CHANGELOG_LINE_MAX_CHARS = 200;

/** The guides: every `.md` file directly in docs/ (the generated docs/api/ is a folder, not a guide), with its size in bytes. */
function guideSizes(root: string): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const name of readdirSync(join(root, 'docs')).sort()) {
    const path = join(root, 'docs', name);
    if (name.endsWith('.md') && statSync(path).isFile()) sizes.set(`docs/${name}`, statSync(path).size);
  }
  return sizes;
}

/** `file: N bytes` for each entry of `sizes` over `max`. */
function oversize(sizes: ReadonlyMap<string, number>, max: number): string[] {
  return [...sizes].filter(([, size]) => size > max).map(([file, size]) => `${file}: ${size} bytes`);
}

/** `line N: C characters` for each line of `text` longer than `max` code points. */
function longLines(text: string, max: number): string[] {
  return text
    .split('\n')
    .map((line, index) => ({ number: index + 1, length: Array.from(line).length }))
    .filter(({ length }) => length > max)
    .map(({ number, length }) => `line ${number}: ${length} characters`);
}

/** `line N: …` for each line under a `### ` section that is neither blank nor an entry (`- …`): an entry continued on a second line. */
function continuedEntries(changelog: string): string[] {
  const lines = changelog.split('\n');
  const wrong: string[] = [];
  let inSection = false;
  lines.forEach((line, index) => {
    if (line.startsWith('#')) inSection = line.startsWith('### ');
    else if (inSection && line.trim() !== '' && !line.startsWith('- ')) wrong.push(`line ${index + 1}: ${line.slice(0, 60)}`);
  });
  return wrong;
}

describe('Documentation sizes', () => {
  const guides = guideSizes(ROOT);

  it('reads every guide in docs/, docs/resume.md included', () => {
    expect([...guides.keys()]).to.include.members(['docs/remote.md', 'docs/resume.md', 'docs/wire.md', 'docs/deploy.md']);
  });

  it(`keeps docs/*.md at most ${DOCS_TOTAL_MAX_BYTES} bytes together`, () => {
    const total = [...guides.values()].reduce((sum, size) => sum + size, 0);
    expect(total, [...guides].map(([file, size]) => `${file}: ${size}`).join('\n')).to.be.at.most(DOCS_TOTAL_MAX_BYTES);
  });

  it(`keeps each guide in docs/ at most ${GUIDE_MAX_BYTES} bytes`, () => {
    const over = oversize(guides, GUIDE_MAX_BYTES);
    expect(over, over.join('\n')).to.deep.equal([]);
  });

  it(`keeps docs/resume.md at most ${RESUME_GUIDE_MAX_BYTES} bytes`, () => {
    expect(guides.get('docs/resume.md')).to.be.at.most(RESUME_GUIDE_MAX_BYTES);
  });

  it(`keeps bench/README.md at most ${BENCH_README_MAX_BYTES} bytes`, () => {
    expect(statSync(join(ROOT, 'bench', 'README.md')).size).to.be.at.most(BENCH_README_MAX_BYTES);
  });

  it(`keeps every line of CHANGELOG.md at most ${CHANGELOG_LINE_MAX_CHARS} characters`, () => {
    const long = longLines(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'), CHANGELOG_LINE_MAX_CHARS);
    expect(long, long.join('\n')).to.deep.equal([]);
  });

  it('writes each CHANGELOG entry on one line', () => {
    const continued = continuedEntries(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'));
    expect(continued, continued.join('\n')).to.deep.equal([]);
  });
});

describe('the size checks of this spec', () => {
  it('counts a line in characters, not bytes', () => {
    expect(longLines(`${'é'.repeat(200)}\n${'x'.repeat(201)}\n`, 200)).to.deep.equal(['line 2: 201 characters']);
  });

  it('names each file over the limit', () => {
    expect(
      oversize(
        new Map([
          ['docs/a.md', 30_001],
          ['docs/b.md', 30_000],
        ]),
        30_000,
      ),
    ).to.deep.equal(['docs/a.md: 30001 bytes']);
  });

  it('finds an entry continued on a second line, and only under a ### section', () => {
    const changelog = ['# Changelog', 'Intro text.', '## [Unreleased]', '### Added', '- one', '  more of one', '', '- two'].join('\n');
    expect(continuedEntries(changelog)).to.deep.equal(['line 6:   more of one']);
  });
});
