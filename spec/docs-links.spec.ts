import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '..');
const README_MAX_BYTES = 25_000;

/** Every file under `dir` (relative to the root) whose name ends with `suffix`, generated `docs/api/` left out. */
function filesUnder(dir: string, suffix: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  const files: string[] = [];
  // Installed packages and the generated API reference are not the repository's: never walked.
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules' && path !== 'docs/api') files.push(...filesUnder(path, suffix));
    else if (entry.isFile() && entry.name.endsWith(suffix)) files.push(path);
  }
  return files;
}

/** The markdown files a reader of the repository meets: README, CHANGELOG, the guides, the benchmarks, the examples. */
function markdownFiles(): string[] {
  const files = ['README.md', 'CHANGELOG.md', 'bench/README.md', ...filesUnder('docs', '.md'), ...filesUnder('examples', '.md')];
  return files.filter((file) => existsSync(join(ROOT, file)));
}

/** The TypeScript whose comments may name repository files: the library, its specs, benchmarks, examples and scripts. */
function sourceFiles(): string[] {
  return ['lib', 'spec', 'bench', 'examples', 'scripts', 'bin'].flatMap((dir) => filesUnder(dir, '.ts'));
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

/**
 * A repository path: a top-level source folder, then a path ending in a word character or `/`
 * (so a sentence's full stop is not part of it), or running into a glob or template character.
 * Not preceded by a path character, so a path inside another (`dist/lib/index.js`) is not read.
 */
const REPOSITORY_PATH = /(?<![\w./-])(?:lib|spec|docs|bench|examples|scripts|bin)\/(?:[\w./*<>{},-]*[\w/*>}])?/g;

/** Paths that are built, not committed (`npm run docs` writes the API reference). */
const GENERATED = /^docs\/api(\/|$)/;

/** The repository paths `text` names, globs (`lib/gc/*.ts`) and templates (`<name>.js`) left out. */
function repositoryPaths(text: string): string[] {
  return [...text.matchAll(REPOSITORY_PATH)].map((match) => match[0]).filter((path) => !/[*<>{}]/.test(path) && !GENERATED.test(path));
}

/** The text of every comment in a TypeScript source (strings and code left out). */
function commentsOf(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const seen = new Set<number>();
  const comments: string[] = [];
  const take = (ranges: ts.CommentRange[] | undefined): void => {
    for (const range of ranges ?? []) {
      if (seen.has(range.pos)) continue;
      seen.add(range.pos);
      comments.push(text.slice(range.pos, range.end));
    }
  };
  const visit = (node: ts.Node): void => {
    take(ts.getLeadingCommentRanges(text, node.getFullStart()));
    take(ts.getTrailingCommentRanges(text, node.end));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return comments;
}

/** The code spans of a markdown text (fenced blocks left out): where a guide names a file without linking it. */
function codeSpansOf(markdown: string): string[] {
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  return [...withoutFences.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!);
}

/** `file: path` for each path named in `texts` that does not exist in the repository. */
function missingPaths(file: string, texts: string[]): string[] {
  return texts
    .flatMap((text) => repositoryPaths(text))
    .filter((path) => !existsSync(join(ROOT, path)))
    .map((path) => `${file}: ${path}`);
}

describe('Documentation', () => {
  it('reads the README, the CHANGELOG, every guide in docs/ and bench/README.md', () => {
    const files = markdownFiles();
    expect(files).to.include.members(['README.md', 'CHANGELOG.md', 'bench/README.md', 'docs/wire.md', 'docs/errors.md']);
  });

  it('reads the comments of lib/ and spec/', () => {
    expect(sourceFiles()).to.include.members(['lib/index.ts', 'lib/framing/writer.ts', 'spec/docs-links.spec.ts', 'spec/helpers/wire.ts']);
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

  it('names only repository files that exist, in code spans of the markdown and in comments of the TypeScript', function () {
    // It parses every TypeScript file of the repository (about a second of CPU): on a loaded machine that takes longer than the default.
    this.timeout(120_000);
    const missing: string[] = [];
    for (const file of markdownFiles()) missing.push(...missingPaths(file, codeSpansOf(readFileSync(join(ROOT, file), 'utf8'))));
    for (const file of sourceFiles()) missing.push(...missingPaths(file, commentsOf(file, readFileSync(join(ROOT, file), 'utf8'))));
    expect(missing, missing.join('\n')).to.deep.equal([]);
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

  it('reports a path named in a comment or a code span that does not exist, and only in comments', () => {
    const source = [
      '/** The cases of spec/no-such-page.md, as docs/wire.md states them (see lib/gc/*.ts, bench/servers/<name>.ts). */',
      "const target = 'spec/also-missing.md'; // written to docs/api/index.html",
      '// lib/no-such-module.ts.',
    ].join('\n');
    expect(missingPaths('fixture.ts', commentsOf('fixture.ts', source))).to.deep.equal([
      'fixture.ts: spec/no-such-page.md',
      'fixture.ts: lib/no-such-module.ts',
    ]);
    expect(missingPaths('fixture.md', codeSpansOf('named in `spec/wire.md`, not in [a link](x.md) text spec/gone.md'))).to.deep.equal([
      'fixture.md: spec/wire.md',
    ]);
  });
});
