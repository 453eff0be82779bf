/**
 * Makes docs/images/viewer.png: a real chain (conductor, two passthrough proxies, the conformance
 * agent) runs an initialize, a prompt and a cancelled request into a trace file; the viewer serves
 * it and headless Chromium takes the picture, with a cancel selected.
 *
 *   npm run build && node -r ts-node/register/transpile-only scripts/viewer-screenshot.ts
 *
 * Needs Debian's chromium at /usr/bin/chromium.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS } from '../spec/helpers/chromium';
import { Conductor, createConnectionPair, type JsonObject } from '../lib';
import { serveTraceViewer, type TraceEvent } from '../lib/trace';

const ROOT = resolve(__dirname, '..');
const PEER = (name: string): string => `node ${join(ROOT, 'dist', 'examples', name)}`;

async function capture(file: string): Promise<void> {
  const [conductorSide, client] = createConnectionPair();
  let sleepReachedAgent!: () => void;
  const reached = new Promise<void>((done) => (sleepReachedAgent = done));
  const conductor = new Conductor({
    client: conductorSide,
    components: [PEER('passthrough-proxy.js'), PEER('passthrough-proxy.js'), PEER('conformance-agent.js')],
    traceFile: file,
    stderr: 'ignore',
    onTraceEvent: (event: TraceEvent) => {
      if (event.type === 'request' && event.method === '_test/sleep' && event.to === 'Agent') sleepReachedAgent();
    },
  });
  const idle = new Promise<void>((done) => {
    client.onNotification('session/update', (params: JsonObject) => {
      if ((params.update as JsonObject).state === 'idle') done();
    });
  });
  await client.sendRequest('initialize', { protocolVersion: 2, info: { name: 'docs', version: '1.0.0' }, capabilities: {} });
  const { sessionId } = await client.sendRequest<{ sessionId: string }>('session/new', { cwd: '/', mcpServers: [] });
  await client.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
  await idle;
  const sleep = client.sendRequest('_test/sleep', { ms: 60000 });
  await reached;
  sleep.cancel();
  await sleep.then(undefined, () => undefined);
  await client.close();
  await conductor.closed;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'acp-wire-screenshot-'));
  const file = join(dir, 'trace.jsons');
  try {
    await capture(file);
    const viewer = await serveTraceViewer({ file });
    const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_FLAGS],
      viewport: { width: 1400, height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(viewer.url);
    await page.waitForSelector('g.msg.cancel');
    await page.click('g.msg.cancel >> nth=1 >> .label', { timeout: 20000 });
    const height = (await page.evaluate(
      "document.querySelector('header').offsetHeight + document.getElementById('scroll').scrollHeight",
    )) as number;
    await page.setViewportSize({ width: 1400, height });
    await page.screenshot({ path: join(ROOT, 'docs', 'images', 'viewer.png') });
    await context.close();
    await viewer.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
