/**
 * The hosting measurements (`--hosting N`) as a Markdown section.
 *
 * @packageDocumentation
 */
import type { HostingResult } from './hosting';

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`; // negative: the process shrank (a collection, freed pages)
}

/** Formats the memory per idle client and the capacity of one serve process. */
export function formatHosting(result: HostingResult): string {
  const lines = [
    '## Hosting: memory per idle client connection (acp-wire serve, WebSocket, conformance agent)',
    '',
    '| hosting | idle clients | serve RSS / client | serve heap / client | agent processes RSS / client | total RSS / client |',
    '|---------|-------------:|-------------------:|--------------------:|-----------------------------:|-------------------:|',
  ];
  for (const cost of result.idle) {
    const name = cost.hosting === 'module' ? 'in-process (--agent-module)' : 'a process per client';
    lines.push(
      `| ${name} | ${cost.clients} | ${kib(cost.serveRssEach)} | ${kib(cost.serveHeapEach)} | ${kib(cost.agentRssEach)} | ${kib(cost.totalRssEach)} |`,
    );
  }
  const { capacity } = result;
  if (capacity) {
    lines.push(
      '',
      `Connections per host: one serve process (--agent-module) held ${capacity.clients} idle clients ` +
        `(stopped by: ${capacity.stoppedBy}) after ${capacity.seconds.toFixed(1)} s, at ${mib(capacity.rss)} RSS ` +
        `and ${mib(capacity.heapUsed)} heap.`,
    );
  }
  return lines.join('\n');
}
