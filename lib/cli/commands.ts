/**
 * The table of `acp-wire` subcommands. To add one, write it as a {@link Subcommand} in its own
 * module under `lib/cli/` and list it here.
 *
 * @packageDocumentation
 */
import { conduct } from './conduct';
import { mcpStdio } from './mcp-stdio';
import { serve } from './serve';
import type { Subcommand } from './subcommand';
import { trace } from './trace';

/** Every subcommand, in the order `acp-wire --help` lists them. */
export const COMMANDS: readonly Subcommand[] = [conduct, serve, trace, mcpStdio];
