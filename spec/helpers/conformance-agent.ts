/**
 * The conformance agent in specs: its compiled program spawned over stdio, the `initialize`
 * exchange every spec starts with, and stable names for the ids it generates.
 */
import { join } from 'node:path';
import { CONFORMANCE_AGENT, ROOT, spawnScript, type SpawnedProcess } from './processes';

/** The `initialize` params the specs send. */
export const CLIENT_INIT = { protocolVersion: 2, info: { name: 'spec-client', version: '1.0.0' }, capabilities: {} };

/** The package version the agent reports. */
export const PACKAGE_VERSION: string = (require(join(ROOT, 'package.json')) as { version: string }).version;

/** The agent's exact `initialize` result, as a JSON text. */
export const INIT_RESULT = `{"protocolVersion":2,"info":{"name":"acp-wire-conformance-agent","version":"${PACKAGE_VERSION}"},"capabilities":{"session":{}}}`;

/** Spawns `node dist/examples/conformance-agent.js ...args` (call `ensureBuilt()` first). */
export function spawnAgent(args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): SpawnedProcess {
  return spawnScript(CONFORMANCE_AGENT, args, { env });
}

/** Spawns the agent and completes `initialize` (id `"init"`); resolves with it. */
export async function initializedAgent(): Promise<SpawnedProcess> {
  const agent = spawnAgent();
  const line = await agent.request('init', 'initialize', CLIENT_INIT);
  if (line !== `{"jsonrpc":"2.0","id":"init","result":${INIT_RESULT}}`) throw new Error(`initialize failed: ${line}`);
  return agent;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * Replaces generated UUIDs (session and message ids) by `<id1>`, `<id2>`… in order of first
 * appearance, consistently across every line given to the same namer, so a spec can compare
 * exact lines and still check that an id recurs.
 */
export class IdNamer {
  readonly #names = new Map<string, string>();

  /** The line with its UUIDs named. */
  name(line: string): string {
    return line.replace(UUID, (uuid) => {
      let name = this.#names.get(uuid);
      if (!name) this.#names.set(uuid, (name = `<id${this.#names.size + 1}>`));
      return name;
    });
  }

  /** Every line named. */
  names(lines: readonly string[]): string[] {
    return lines.map((line) => this.name(line));
  }

  /** The UUID named `name`. */
  idOf(name: string): string {
    for (const [uuid, known] of this.#names) if (known === name) return uuid;
    throw new Error(`no id named ${name}`);
  }
}
