/**
 * The table of `acp-wire` subcommands. To add one, write it as a {@link Subcommand} in its own
 * module under `lib/cli/` and list it here.
 *
 * @packageDocumentation
 */
import type * as CheckModule from './check';
import type * as ConductModule from './conduct';
import type * as McpStdioModule from './mcp-stdio';
import type * as ServeModule from './serve';
import type { Subcommand } from './subcommand';
import type * as TraceModule from './trace';

/**
 * A subcommand whose module is loaded when it is first used (run, or asked for its help): running
 * `acp-wire conduct` does not load what `serve`, `trace`, `check` or `mcp-stdio` need.
 */
function onDemand(name: string, load: () => Subcommand): Subcommand {
  return {
    name,
    get summary() {
      return load().summary;
    },
    get help() {
      return load().help;
    },
    run: (argv, context) => load().run(argv, context),
  };
}

/** Every subcommand, in the order `acp-wire --help` lists them. */
export const COMMANDS: readonly Subcommand[] = [
  onDemand('conduct', () => (require('./conduct') as typeof ConductModule).conduct),
  onDemand('serve', () => (require('./serve') as typeof ServeModule).serve),
  onDemand('trace', () => (require('./trace') as typeof TraceModule).trace),
  onDemand('check', () => (require('./check') as typeof CheckModule).check),
  onDemand('mcp-stdio', () => (require('./mcp-stdio') as typeof McpStdioModule).mcpStdio),
];
