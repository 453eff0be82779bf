/** Command-line options shared by the measurement scripts. */

/**
 * The positive number given after `name` in `argv` (`--runs 5`), or `fallback` when absent.
 *
 * @throws RangeError if the value is not a positive number
 */
export function positiveOption(argv: readonly string[], name: string, fallback: number): number {
  const at = argv.indexOf(name);
  const parsed = at === -1 ? fallback : Number(argv[at + 1]);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new RangeError(`${name} must be a positive number`);
  return parsed;
}
