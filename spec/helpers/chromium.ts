/**
 * Debian's Chromium as the specs and scripts start it, headless, as root, on a machine with no
 * network: without the background-networking flags it keeps trying to reach Google's hosts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where `apt-get install -y chromium` puts it (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** The command-line flags every launch passes. */
export const CHROMIUM_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Headless {@link CHROMIUM} on a fresh profile, and every request its pages made. */
export interface Browser {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Every HTTP request the pages made (WebSockets are not routed), in order. */
  readonly requested: URL[];
  /** Closes the browser (its process ends) and removes the profile. */
  close(): Promise<void>;
}

/**
 * Starts {@link CHROMIUM} (through playwright-core) on a fresh profile directory, with
 * {@link CHROMIUM_FLAGS}. Requests off 127.0.0.1 are recorded and refused.
 *
 * @throws Error when Chromium is missing.
 */
export async function openBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'acp-wire-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_FLAGS] });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  const requested: URL[] = [];
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    requested.push(url);
    if (url.hostname === '127.0.0.1') await route.continue();
    else await route.abort();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    requested,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
