/**
 * A mocha root-hook plugin (loaded by .mocharc.json): a spec file that leaves something keeping
 * the event loop alive (a socket, a server, a child process, a timer) fails.
 *
 * @remarks Run one after another in one process, a leak made mocha hang (the project never uses
 * `--exit`). `npm test` runs spec files in parallel worker processes, and mocha ends its workers
 * when the run is over, whatever they still hold: so each file is checked here instead. The
 * `beforeAll`/`afterAll` root hooks run around each file in a worker (around the whole run when
 * serial). What counts is what Node itself reports as keeping the loop alive
 * (`process.getActiveResourcesInfo()`: referenced handles, requests and timers), compared with
 * what was there before; things still closing get {@link SETTLE_MS} to go.
 */
import type { Context, RootHookObject } from 'mocha';

/** How long a file's resources may take to close after its last test (a child's exit, a socket's close). */
const SETTLE_MS = 5_000;
const POLL_MS = 20;

/** Each resource type with how many there are of it. */
function countByType(resources: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of resources) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/** What `now` holds beyond `before`, as "2 × TCPSocketWrap" items; empty when nothing. */
export function leftOver(before: ReadonlyMap<string, number>, now: ReadonlyMap<string, number>): string[] {
  const extra: string[] = [];
  for (const [type, count] of now) {
    const more = count - (before.get(type) ?? 0);
    if (more > 0) extra.push(`${more} × ${type}`);
  }
  return extra;
}

let baseline = new Map<string, number>();

/** The root hooks mocha registers from this module. */
export const mochaHooks: RootHookObject = {
  beforeAll(): void {
    baseline = countByType(process.getActiveResourcesInfo());
  },
  async afterAll(this: Context): Promise<void> {
    this.timeout(SETTLE_MS + 5_000);
    const deadline = Date.now() + SETTLE_MS;
    let extra = leftOver(baseline, countByType(process.getActiveResourcesInfo()));
    while (extra.length > 0 && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, POLL_MS));
      // Read in this timer's continuation, Node still counts the timer itself: not the spec's.
      const now = countByType(process.getActiveResourcesInfo());
      now.set('Timeout', (now.get('Timeout') ?? 1) - 1);
      extra = leftOver(baseline, now);
    }
    if (extra.length > 0) {
      const files = [...new Set((this.test?.parent?.suites ?? []).map((suite) => suite.file))].join(', ');
      throw new Error(
        `${files || 'the spec files'} left ${extra.join(', ')} keeping the event loop alive ${SETTLE_MS} ms after the last test`,
      );
    }
  },
};
