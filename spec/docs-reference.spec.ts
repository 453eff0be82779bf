import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as api from '../lib';
import * as check from '../lib/check';
import * as server from '../lib/hosting';
import * as mcp from '../lib/mcp';
import * as mcpBridge from '../lib/mcp-bridge';
import * as trace from '../lib/trace';

const ROOT = join(__dirname, '..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** An example file as the README shows it: without its header comment, importing from the package. */
function asShownInReadme(exampleFile: string): string {
  return read(exampleFile)
    .replace(/^\/\*\*[\s\S]*?\*\/\n/, '')
    .replaceAll("from '../lib'", "from 'acp-wire'")
    .trim();
}

/** The bodies of the README's ```ts blocks. */
function typescriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!.trim());
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('README quick start', () => {
  for (const example of ['examples/quickstart-agent.ts', 'examples/quickstart-client.ts']) {
    it(`shows ${example} exactly as it runs`, () => {
      expect(typescriptBlocks(read('README.md'))).to.include(asShownInReadme(example));
    });
  }
});

describe('docs/errors.md', () => {
  const errorsPage = read('docs/errors.md');

  it('has a row for every error class the package exports, from any entry point', () => {
    const classes = Object.entries({ ...api, ...check, ...server, ...mcp, ...mcpBridge, ...trace })
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error)
      .map(([name]) => name);
    expect(classes).to.include.members(['RpcError', 'ConnectionClosedError', 'McpProtocolError', 'AgentUnusableError']);
    const missing = classes.filter((name) => name !== 'RpcError' && !errorsPage.includes(`| \`${name}\` |`));
    expect(missing).to.deep.equal([]);
  });

  it('names every local error code defined in lib/', () => {
    const codes = new Set(sourceFiles('lib').flatMap((file) => [...read(file).matchAll(/['"](ACP_WIRE_[A-Z_]+)['"]/g)].map((m) => m[1]!)));
    expect(codes).to.include('ACP_WIRE_CONNECTION_CLOSED');
    const missing = [...codes].filter((code) => !errorsPage.includes(`\`${code}\``));
    expect(missing).to.deep.equal([]);
  });

  it('lists every ErrorCode with its number', () => {
    const missing = Object.entries(api.ErrorCode)
      .map(([name, code]) => `| \`${code}\` | \`${name}\` |`)
      .filter((row) => !errorsPage.includes(row));
    expect(missing).to.deep.equal([]);
  });
});
