/**
 * `serve --agent-module FILE`: loads the module that makes the agent instances `serve` hosts in
 * its own process, and finds its factory.
 *
 * @packageDocumentation
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentFactory, HostedAgentFailure } from '../hosting/agent-factory';
import { AgentHost } from '../hosting/agent-host';
import type { Logger } from '../support/logger';
import { DEFAULT_MAX_PAYLOAD } from '../transports/remote/limits';
import { UsageError } from './arguments';
import type { AgentHosting } from './agent-hosting';
import { report } from './subcommand';

/** A module `--agent-module` names that could not be loaded (it threw while it was evaluated). */
export class AgentModuleLoadError extends Error {
  override readonly name = 'AgentModuleLoadError';
}

/**
 * Loads `file` (CommonJS or an ES module, by `import()`; a file type only a `require` hook knows,
 * e.g. `.ts` under `node -r ts-node/register`, by `require`) and returns its factory: the
 * `createAgent` export, else the default export when it is a function.
 *
 * @throws UsageError when the file does not exist or exports no factory;
 * AgentModuleLoadError when loading it threw
 */
export async function loadAgentFactory(file: string): Promise<AgentFactory> {
  const path = resolve(file);
  if (!existsSync(path)) throw new UsageError(`--agent-module ${file}: no such file`);
  let exports: unknown;
  try {
    exports = await importModule(path);
  } catch (error) {
    throw new AgentModuleLoadError(`cannot load --agent-module ${file}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  const factory = factoryOf(exports);
  if (!factory) throw new UsageError(`--agent-module ${file} exports no createAgent function (nor a default function)`);
  return factory;
}

/** Codes of an `import()` that a `require` may still load: a file type only a require hook knows. */
const REQUIRE_INSTEAD = new Set(['ERR_UNKNOWN_FILE_EXTENSION', 'MODULE_NOT_FOUND']);

async function importModule(path: string): Promise<unknown> {
  try {
    return await import(pathToFileURL(path).href);
  } catch (error) {
    // MODULE_NOT_FOUND for a file that exists: this file was compiled to `require()` the URL (it
    // runs from source under a require hook), or the module lacks a dependency (`require` says so).
    if (!REQUIRE_INSTEAD.has((error as NodeJS.ErrnoException)?.code ?? '')) throw error;
    return require(path) as unknown;
  }
}

/**
 * The factory among a module's exports: `createAgent`, or the default export when it is a function;
 * looked for in the module namespace, then in its `default` (a CommonJS module's `module.exports`,
 * holding a compiled TypeScript `export default` as its own `default`).
 */
function factoryOf(exports: unknown): AgentFactory | undefined {
  const layers: unknown[] = [exports];
  const inner = (exports as { default?: unknown } | undefined)?.default;
  if (typeof inner === 'object' && inner !== null) layers.push(inner);
  for (const layer of layers) {
    const { createAgent, default: fallback } = (layer ?? {}) as { createAgent?: unknown; default?: unknown };
    if (typeof createAgent === 'function') return createAgent as AgentFactory;
    if (typeof fallback === 'function') return fallback as AgentFactory;
  }
  return undefined;
}

/**
 * `serve`'s hosting of one agent instance per client, made by `factory` in this process: a failing
 * instance is reported on stderr and fails its own client only.
 *
 * @remarks Until `ended()` has resolved, the process's `'uncaughtException'` and
 * `'unhandledRejection'` listeners fail the instance whose code threw (see
 * {@link AgentHost.failCurrent}); what no instance threw is reported and ends the process with
 * exit code 1, as Node does by default.
 * @param disposeTimeoutMs - how long an instance's dispose may take (`--kill-timeout`)
 * @param logger - each client connection's logger (bad input, closes with an error)
 */
export function moduleHosting(factory: AgentFactory, disposeTimeoutMs: number, logger: Logger): AgentHosting {
  const host = new AgentHost({
    factory,
    connection: { logger, name: 'serve', maxLineBytes: DEFAULT_MAX_PAYLOAD },
    disposeTimeoutMs,
    onFailure: reportFailure,
  });
  const onUncaught = (error: unknown): void => {
    if (host.failCurrent(error)) return;
    report('serve', `uncaught exception outside any agent instance: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
  };
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  return {
    onStream: (stream, info) => host.host(stream, info),
    processes: () => [],
    ended: async () => {
      await host.whenAllEnded();
      process.removeListener('uncaughtException', onUncaught);
      process.removeListener('unhandledRejection', onUncaught);
    },
  };
}

const FAILURES: Record<HostedAgentFailure['stage'], string> = {
  start: 'could not be made',
  run: 'failed, its client is closed',
  dispose: 'failed to dispose',
};

function reportFailure({ connectionId, stage, error }: HostedAgentFailure): void {
  const message = error instanceof Error ? error.message : String(error);
  report('serve', `the agent of client ${connectionId} ${FAILURES[stage]}: ${message}`);
}
