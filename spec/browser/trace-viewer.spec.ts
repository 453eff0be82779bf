/**
 * The trace viewer page in headless Chromium (Debian's `chromium`, started by the spec through
 * playwright-core): the rendered DOM of a real chain's trace, live updates, and no request off
 * 127.0.0.1. Keeps a screenshot in test-artifacts/ (git-ignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { RpcError, type JsonObject } from '../../lib';
import { TraceStore, serveTraceViewer, type TraceViewer } from '../../lib/trace';
import { AGENT_COMMAND, CLIENT_INIT, PASSTHROUGH_COMMAND, ROOT, ensureBuilt, startTracedChain, tempDir } from '../trace/helpers';
import { CHROMIUM, openBrowser, type Browser } from '../helpers/chromium';

const ARTIFACTS = join(ROOT, 'test-artifacts');

/** Runs a real two-proxy chain through an initialize, a prompt and a cancelled request, into `file`. */
async function captureRealTrace(file: string): Promise<void> {
  const chain = startTracedChain([PASSTHROUGH_COMMAND, PASSTHROUGH_COMMAND, AGENT_COMMAND], { traceFile: file });
  try {
    const { client } = chain;
    const idle = new Promise<void>((resolve) => {
      client.onNotification('session/update', (params: JsonObject) => {
        if ((params.update as JsonObject).state === 'idle') resolve();
      });
    });
    await client.sendRequest('initialize', CLIENT_INIT);
    const { sessionId } = await client.sendRequest<{ sessionId: string }>('session/new', { cwd: '/', mcpServers: [] });
    await client.sendRequest('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Tell me about the wire' }] });
    await idle;
    const sleep = client.sendRequest('_test/sleep', { ms: 60000 });
    await chain.waitForEvent((event) => event.type === 'request' && event.method === '_test/sleep' && event.to === 'Agent');
    sleep.cancel();
    const error = await sleep.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).to.be.instanceOf(RpcError);
  } finally {
    await chain.close();
  }
}

function laneTitles(page: Page): Promise<string[]> {
  return page.$$eval('#lanes .lane-title', (titles) => titles.map((title) => title.textContent ?? ''));
}

function messages(page: Page, selector: string): Promise<{ from: string; to: string; label: string; automatic: string | null }[]> {
  return page.$$eval(selector, (groups) =>
    groups.map((group) => ({
      from: group.getAttribute('data-from') ?? '',
      to: group.getAttribute('data-to') ?? '',
      label: group.querySelector('.label')?.textContent ?? '',
      automatic: group.getAttribute('data-automatic'),
    })),
  );
}

describe('trace viewer page', function () {
  this.timeout(60000);
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  let browser: Browser | undefined;
  let viewer: TraceViewer | undefined;

  before(async function () {
    this.timeout(60000);
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)`);
    ensureBuilt();
    dir = tempDir();
    file = join(dir.path, 'trace.jsons');
    await captureRealTrace(file);
  });
  after(() => dir?.remove());
  afterEach(async () => {
    await browser?.close();
    await viewer?.close();
    browser = undefined;
    viewer = undefined;
  });

  it("draws one swimlane per component and a cancel's arrows hop by hop, labelled, with the automatic answers", async () => {
    viewer = await serveTraceViewer({ file });
    browser = await openBrowser();
    const { page } = browser;
    await page.goto(viewer.url);
    await page.waitForSelector('g.msg.cancel');

    expect(await laneTitles(page)).to.deep.equal(['Client', 'Proxy(0)', 'Proxy(1)', 'Agent']);
    const cancels = await messages(page, 'g.msg.cancel');
    expect(cancels.map(({ from, to }) => `${from}→${to}`)).to.deep.equal(['Client→Proxy(0)', 'Proxy(0)→Proxy(1)', 'Proxy(1)→Agent']);
    for (const cancel of cancels) expect(cancel.label).to.match(/^✕ \$\/cancel_request #\d+$/);
    const automatic = await messages(page, 'g.msg.automatic');
    expect(automatic.map(({ from, to, automatic: kind }) => `${from}→${to} ${kind}`)).to.deep.equal([
      'Agent→Proxy(1) cancelled',
      'Proxy(1)→Proxy(0) cancelled',
      'Proxy(0)→Client cancelled',
    ]);
    for (const answer of automatic) expect(answer.label).to.contain('-32800 (automatic answer)');
    const cancelledRequests = await messages(page, 'g.msg.request[data-method="_test/sleep"]');
    expect(cancelledRequests.map(({ label }) => label))
      .to.have.length(3)
      .and.satisfy((labels: string[]) => labels.every((l) => l.endsWith('✕ cancelled')));
    const previews = await page.$$eval('g.msg[data-method="session/update"] .preview', (texts) => texts.map((text) => text.textContent));
    expect(previews).to.include('“Tell me about the wire”');
    expect(await page.$$('line.span')).to.have.length.greaterThan(0);

    // The diagram scrolls inside the page: make the viewport as tall as the diagram to see it all.
    const height = (await page.evaluate(
      "document.querySelector('header').offsetHeight + document.getElementById('scroll').scrollHeight",
    )) as number;
    await page.setViewportSize({ width: 1280, height: Math.min(height, 6000) });
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'viewer.png') });
    expect(browser.requested.length).to.be.greaterThan(0);
    expect(browser.requested.filter((url) => url.hostname !== '127.0.0.1').map(String)).to.deep.equal([]);
  });

  it('filters by message kind and by session, and shows the JSON of a clicked message', async () => {
    viewer = await serveTraceViewer({ file });
    browser = await openBrowser();
    const { page } = browser;
    await page.goto(viewer.url);
    await page.waitForSelector('g.msg.cancel');
    const all = (await page.$$('g.msg')).length;

    await page.uncheck('#show-responses');
    expect(await page.$$('g.msg.response')).to.have.length(0);
    await page.check('#show-responses');
    const session = await page.$eval('#session option:nth-child(2)', (option) => option.getAttribute('value') ?? '');
    await page.selectOption('#session', session);
    const inSession = await page.$$eval('g.msg', (groups) => groups.map((group) => group.getAttribute('data-method')));
    expect(inSession.length).to.be.within(1, all - 1);
    expect(inSession).not.to.include('_test/sleep');
    expect(inSession).to.include('session/update');
    await page.selectOption('#session', '');

    await page.click('g.msg.cancel >> nth=0 >> .label');
    const detail = await page.textContent('#detail-body');
    expect(detail).to.contain('"method": "$/cancel_request"').and.contain('cancels').and.contain('"method": "_test/sleep"');
    expect(browser.requested.filter((url) => url.hostname !== '127.0.0.1').map(String)).to.deep.equal([]);
  });

  it('updates while the chain runs: an event pushed to a live store appears without a reload', async () => {
    const store = new TraceStore();
    viewer = await serveTraceViewer({ store });
    browser = await openBrowser();
    const { page } = browser;
    await page.goto(viewer.url);
    await page.waitForSelector('#empty');
    store.push({
      type: 'request',
      ts: 0.001,
      protocol: 'acp',
      from: 'Client',
      to: 'Agent',
      id: 1,
      method: 'session/new',
      params: { cwd: '/' },
    });
    await page.waitForSelector('g.msg.request[data-method="session/new"]');
    store.push({ type: 'response', ts: 0.004, from: 'Agent', to: 'Client', id: 1, is_error: false, payload: { sessionId: 's' } });
    await page.waitForSelector('g.msg.response');
    expect(await page.textContent('g.msg.response .label')).to.equal('#1 result · 3.0 ms');
    expect(await laneTitles(page)).to.deep.equal(['Client', 'Agent']);
  });
});
