/**
 * Debian's Chromium as the specs and scripts start it, headless, as root, on a machine with no
 * network: without the background-networking flags it keeps trying to reach Google's hosts.
 */

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
