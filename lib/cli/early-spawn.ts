/**
 * The start of `acp-wire conduct` on stdio: its components are spawned before the command line
 * and the library load, so that they start while the conductor loads what it needs to talk to
 * them. The program hands these processes to the subcommand, whose conductor takes them instead
 * of spawning its commands again.
 *
 * @packageDocumentation
 */
import { splitCommandLine } from '../chain/command-line';
import { spawnEarly, type EarlyProcessTree } from '../transports/process-tree';

/** The options that leave a chain on stdio started as it is without them. */
const NEUTRAL_OPTIONS = ['--trace'];

/** How long a component nobody took has to exit once its stdin is closed (`conduct`'s default kill timeout). */
const DISCARD_KILL_TIMEOUT_MS = 2000;

/** The components `acp-wire conduct` spawned before it loaded the rest of the library. */
export interface EarlyComponents {
  /** The component command lines, as given on the command line. */
  readonly commands: readonly string[];
  /** Their processes, in the same order. */
  readonly trees: readonly EarlyProcessTree[];
  /** Ends every process nobody took (a chain that was not started); resolves once they have ended. */
  discard(): Promise<void>;
}

/**
 * Spawns the components of `acp-wire conduct` when `argv` (the arguments after the program) is
 * that subcommand with commands and no option but `--trace`: nothing else can make it fail before
 * it starts them, or start them differently. Anything else (another option, a URL, a command line
 * that cannot be split) spawns nothing, returns `undefined` and is left to the subcommand.
 */
export function spawnConductComponentsEarly(argv: readonly string[]): EarlyComponents | undefined {
  const [name, ...rest] = argv;
  if (name !== 'conduct') return undefined;
  const commands = rest.filter((arg) => !NEUTRAL_OPTIONS.includes(arg));
  if (commands.length === 0 || commands.some((arg) => arg.startsWith('-') || /^[a-z]+:\/\//i.test(arg))) return undefined;
  let words: string[][];
  try {
    words = commands.map(splitCommandLine);
  } catch {
    return undefined;
  }
  if (words.some((command) => command.length === 0)) return undefined;
  const trees = words.map(([command, ...args]) => spawnEarly(command!, args));
  return {
    commands,
    trees,
    discard: async () => void (await Promise.all(trees.map((tree) => tree.discard(DISCARD_KILL_TIMEOUT_MS)))),
  };
}
