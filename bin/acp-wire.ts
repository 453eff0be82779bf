#!/usr/bin/env node
/**
 * The `acp-wire` command. The subcommands live in `lib/cli/` (the table is `lib/cli/commands.ts`);
 * `acp-wire --help` lists them.
 *
 * @packageDocumentation
 */
import { spawnConductComponentsEarly } from '../lib/cli/early-spawn';
import type * as MainModule from '../lib/cli/main';

const argv = process.argv.slice(2);
// A chain's components start first, while the rest of the command line loads; `conduct` takes them.
const early = spawnConductComponentsEarly(argv);
const { runCli } = require('../lib/cli/main') as typeof MainModule;

void runCli(argv, undefined, { early }).then(async (code) => {
  await early?.discard();
  process.exitCode = code;
});
