#!/usr/bin/env node
/**
 * The `acp-wire` command. The subcommands live in `lib/cli/` (the table is `lib/cli/commands.ts`);
 * `acp-wire --help` lists them.
 *
 * @packageDocumentation
 */
import { runCli } from '../lib/cli/main';

void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
