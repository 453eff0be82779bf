/**
 * A web page in headless Chromium (spec/helpers/chromium.ts) runs the official ACP SDK's client
 * over its browser WebSocket stream against `acp-wire serve --allow-origin` hosting the
 * conformance agent: a turn, a turn cancelled with `session/cancel`, and a page of another origin
 * refused. The page's script (spec/browser/sdk-page.ts) is bundled with esbuild when the spec runs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { build, stop as stopEsbuild } from 'esbuild';
import type { Page } from 'playwright-core';
import { CHROMIUM, openBrowser, type Browser } from '../helpers/chromium';
import { childProcesses } from '../helpers/process-table';
import { CLI, CONFORMANCE_AGENT, ensureBuilt, spawnScript, stopAll, type SpawnedProcess } from '../helpers/processes';
import { PROMPTS, type PageOutcome } from './sdk-page-contract';

/** The page's script: spec/browser/sdk-page.ts and the SDK, bundled for the browser; esbuild's service process ends after. */
async function bundlePage(): Promise<string> {
  try {
    const result = await build({
      entryPoints: [join(__dirname, 'sdk-page.ts')],
      bundle: true,
      write: false,
      format: 'iife',
      platform: 'browser',
      logLevel: 'silent',
    });
    return result.outputFiles[0]!.text;
  } finally {
    await stopEsbuild();
  }
}

/** An HTTP server on 127.0.0.1 serving the page: its origin is `http://127.0.0.1:<port>`. */
interface PageServer {
  readonly origin: string;
  /** The page's URL, connecting to `acpUrl`. */
  pageUrl(acpUrl: string): string;
  close(): Promise<void>;
}

const PAGE_HTML = '<!doctype html><meta charset="utf-8"><title>ACP SDK page</title><script src="/sdk-page.js"></script>\n';

async function startPageServer(script: string): Promise<PageServer> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (path === '/page.html') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE_HTML);
    else if (path === '/sdk-page.js') response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    pageUrl: (acpUrl) => `${origin}/page.html?acp=${encodeURIComponent(acpUrl)}`,
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}

/** `acp-wire serve` and the WebSocket URL of its `listening` line. */
interface Serve {
  readonly process: SpawnedProcess;
  readonly url: string;
}

/** Starts `acp-wire serve --port 0 --allow-origin <origin> "node conformance-agent.js"`. */
async function startServe(allowedOrigin: string): Promise<Serve> {
  const spawned = spawnScript(CLI, ['serve', '--port', '0', '--allow-origin', allowedOrigin, `${process.execPath} ${CONFORMANCE_AGENT}`]);
  const first = await spawned.stdout.take().catch((error: Error) => {
    throw new Error(`${error.message}\nstderr: ${spawned.stderr.text}`);
  });
  const match = /^listening (ws:\/\/127\.0\.0\.1:\d+\/acp)$/.exec(first);
  if (!match) throw new Error(`unexpected first line ${JSON.stringify(first)}; stderr: ${spawned.stderr.text}`);
  return { process: spawned, url: match[1]! };
}

/** Stops `serve` with SIGTERM (its drain and close) and resolves with its exit code. */
async function stopServe({ process: spawned }: Serve): Promise<number | null> {
  spawned.child.kill('SIGTERM');
  return (await spawned.exited).code;
}

/** What the page's WebSockets did, as Chromium reported them. */
interface SocketLog {
  readonly urls: string[];
  readonly errors: string[];
}

function watchSockets(page: Page): SocketLog {
  const log: SocketLog = { urls: [], errors: [] };
  page.on('websocket', (socket) => {
    log.urls.push(socket.url());
    socket.on('socketerror', (error) => log.errors.push(error));
  });
  return log;
}

/** Opens the page in a new tab and resolves with what it reports. */
async function runPage(browser: Browser, url: string): Promise<{ outcome: PageOutcome; sockets: SocketLog }> {
  const page = await browser.context.newPage();
  try {
    const sockets = watchSockets(page);
    await page.goto(url);
    const outcome = (await page.evaluate('globalThis.acpOutcome')) as PageOutcome | undefined;
    if (outcome === undefined) throw new Error('the page has no acpOutcome: its script did not run');
    return { outcome, sockets };
  } finally {
    await page.close();
  }
}

describe("the official SDK's browser WebSocket client against acp-wire serve --allow-origin", function () {
  this.timeout(60_000);
  let browser: Browser | undefined;
  let allowed: PageServer | undefined;
  let other: PageServer | undefined;
  let serve: Serve | undefined;

  before(async function () {
    this.timeout(180_000);
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)`);
    ensureBuilt();
    const script = await bundlePage();
    allowed = await startPageServer(script);
    other = await startPageServer(script);
    browser = await openBrowser();
  });
  after(async () => {
    await browser?.close();
    await allowed?.close();
    await other?.close();
  });
  beforeEach(async () => {
    serve = await startServe(allowed!.origin);
  });
  afterEach(async () => {
    if (serve && serve.process.child.exitCode === null) await stopServe(serve);
    serve = undefined;
    await stopAll();
  });

  it('runs a turn to end_turn and a turn cancelled with session/cancel from a page of the allowed origin', async () => {
    const { outcome, sockets } = await runPage(browser!, allowed!.pageUrl(serve!.url));
    expect(sockets).to.deep.equal({ urls: [serve!.url], errors: [] });
    if (!outcome.ok) expect.fail(`the page failed: ${outcome.error}`);
    expect(outcome).to.deep.include({ agentName: 'acp-wire-conformance-agent', protocolVersion: 2 });
    const kinds = ['user_message', 'state_update running', 'agent_message_chunk'];
    const { turn, cancelled } = outcome;
    expect(turn).to.deep.include({ kinds, text: `echo: ${PROMPTS.turn}`, stopReason: 'end_turn', userMessageId: turn.messageId });
    // The slow turn sends its first word at once and the next one seconds later: the page cancels in between.
    expect(cancelled).to.deep.include({ kinds, text: 'echo: ', stopReason: 'cancelled', userMessageId: cancelled.messageId });
    expect(cancelled.messageId).to.be.a('string').and.not.equal(turn.messageId);
    expect(browser!.requested.filter((url) => url.hostname !== '127.0.0.1').map(String)).to.deep.equal([]);
    expect(await stopServe(serve!)).to.equal(0);
  });

  it('refuses a page of another origin: its WebSocket handshake fails with 403 and no agent starts', async () => {
    const { outcome, sockets } = await runPage(browser!, other!.pageUrl(serve!.url));
    expect(outcome).to.deep.equal({ ok: false, error: 'error event' });
    expect(sockets.urls).to.deep.equal([serve!.url]);
    expect(sockets.errors).to.have.length(1);
    expect(sockets.errors[0]).to.contain('403');
    expect(childProcesses(serve!.process.child.pid!)).to.deep.equal([]);
    expect(await stopServe(serve!)).to.equal(0);
  });
});
