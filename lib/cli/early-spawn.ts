/**
 * The start of `acp-wire conduct` on stdio: its components are spawned before the command line
 * and the library load, so that they start while the conductor loads what it needs to talk to
 * them. The conductor's spawns then take these processes (see `spawnEarly`).
 *
 * @packageDocumentation
 */
import { splitCommandLine } from '../chain/command-line';
import { spawnEarly } from '../transports/process-tree';

/** The options that leave a chain on stdio started as it is without them. */
const NEUTRAL_OPTIONS = ['--trace'];

/**
 * Spawns the components of `acp-wire conduct` when `argv` (the arguments after the program) is
 * that subcommand with commands and no option but `--trace`: nothing else can make it fail before
 * it starts them, or start them differently. Anything else (another option, a URL, a command line
 * that cannot be split) spawns nothing and is left to the subcommand.
 */
export function spawnConductComponentsEarly(argv: readonly string[]): void {
  const [name, ...rest] = argv;
  if (name !== 'conduct') return;
  const commands = rest.filter((arg) => !NEUTRAL_OPTIONS.includes(arg));
  if (commands.length === 0 || commands.some((arg) => arg.startsWith('-') || /^[a-z]+:\/\//i.test(arg))) return;
  let words: string[][];
  try {
    words = commands.map(splitCommandLine);
  } catch {
    return;
  }
  if (words.some((command) => command.length === 0)) return;
  for (const [command, ...args] of words) spawnEarly(command!, args);
}
