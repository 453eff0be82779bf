import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ROOT = join(__dirname, '..');
const README_MAX_BYTES = 25_000;

/** The markdown files a reader of the repository meets: README, CHANGELOG, the guides, the benchmarks. */
function markdownFiles(): string[] {
  const guides = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', 'CHANGELOG.md', 'bench/README.md', ...guides].filter((file) => existsSync(join(ROOT, file)));
}

/** The text outside fenced code blocks and inline code spans: links there are not links. */
function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Every `[text](target)` link target, without an optional title. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const match of proseOf(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
  return targets;
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

/** The anchors GitHub generates for a file's headings (lower case, punctuation dropped, spaces as `-`). */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutCode.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*$/gm)) {
    const slug = match[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Why `target`, linked from `file`, does not resolve; `undefined` when it does. */
function brokenLink(file: string, target: string): string | undefined {
  const [path = '', anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), decodeURIComponent(path));
  if (!existsSync(resolved)) return `${target}: ${relative(ROOT, resolved)} does not exist`;
  if (anchor === undefined || !resolved.endsWith('.md') || !statSync(resolved).isFile()) return undefined;
  if (headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) return undefined;
  return `${target}: ${relative(ROOT, resolved)} has no heading for #${anchor}`;
}

describe('Documentation', () => {
  it('reads the README, the CHANGELOG, every guide in docs/ and bench/README.md', () => {
    const files = markdownFiles();
    expect(files).to.include.members(['README.md', 'CHANGELOG.md', 'bench/README.md', 'docs/wire.md', 'docs/errors.md']);
  });

  it('links only to files (and headings) that exist in the repository', () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      const markdown = readFileSync(join(ROOT, file), 'utf8');
      for (const target of linkTargets(markdown)) {
        if (isExternal(target)) continue;
        const why = brokenLink(file, target);
        if (why !== undefined) broken.push(`${file} → ${why}`);
      }
    }
    expect(broken, broken.join('\n')).to.deep.equal([]);
  });

  it(`keeps the README at most ${README_MAX_BYTES} bytes`, () => {
    expect(statSync(join(ROOT, 'README.md')).size).to.be.at.most(README_MAX_BYTES);
  });
});

describe('the link checker of this spec', () => {
  it('finds links in prose but not in code', () => {
    const markdown = ['see [a](a.md) and [b](docs/b.md#x "t")', '`[c](c.md)`', '```', '[d](d.md)', '```'].join('\n');
    expect(linkTargets(markdown)).to.deep.equal(['a.md', 'docs/b.md#x']);
  });

  it('derives heading anchors as GitHub does', () => {
    const anchors = headingAnchors('# Errors\n## Situation → what to do\n## `Symbol.dispose` and `using`\n## Errors\n');
    expect([...anchors]).to.deep.equal(['errors', 'situation--what-to-do', 'symboldispose-and-using', 'errors-1']);
  });

  it('reports a missing file and a missing heading', () => {
    expect(brokenLink('README.md', 'docs/no-such-guide.md')).to.match(/does not exist/);
    expect(brokenLink('README.md', 'docs/errors.md#no-such-heading')).to.match(/has no heading/);
    expect(brokenLink('README.md', 'LICENSE')).to.equal(undefined);
  });
});
