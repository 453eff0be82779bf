/** The fault specs' peer: spec/fixtures/fault-peer.ts, connected with the library's own spawnConnection(). */
import { spawnConnection, type ChildConnection, type ConnectionOptions } from '../../lib';
import { ROOT, fixtureArgs } from './processes';

/** Spawns the fault peer (with `gc` exposed) in `mode` and connects to it; its stderr is piped (read it with a LineReader). */
export function spawnFaultPeer(mode: string, args: readonly string[] = [], options: ConnectionOptions = {}): ChildConnection {
  return spawnConnection(process.execPath, ['--expose-gc', ...fixtureArgs('fault-peer', [mode, ...args])], {
    ...options,
    stderr: 'pipe',
    cwd: ROOT,
  });
}
