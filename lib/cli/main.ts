/**
 * The `acp-wire` command line: dispatches to a subcommand from the table in `commands.ts`, and
 * turns help requests, usage errors and operating-system errors into output and exit codes.
 *
 * @packageDocumentation
 */
import { CommandLineError } from '../chain/command-line';
import { packageVersion } from '../support/package-version';
import { UsageError, wantsHelp } from './arguments';
import { COMMANDS } from './commands';
import { describeSystemError, isSystemError, report, type CliContext, type Subcommand } from './subcommand';

function topHelp(commands: readonly Subcommand[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  const list = commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`).join('\n');
  return `usage: acp-wire <command> [options]

commands:
${list}

  acp-wire <command> --help   the command's options
  acp-wire --help, -h         show this text
  acp-wire --version          print the version`;
}

/**
 * Runs the `acp-wire` command line with `argv` (the arguments after the program) and resolves
 * with the exit code: 0, 1 for a failure (one line on stderr), 2 for bad usage (one line naming
 * the problem), or what the subcommand returns. Never rejects.
 *
 * @param commands - the subcommand table (default: every `acp-wire` subcommand)
 * @param context - what the program started before loading this (handed to the subcommand)
 */
export async function runCli(
  argv: readonly string[],
  commands: readonly Subcommand[] = COMMANDS,
  context: CliContext = {},
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) return usageFailure(undefined, new UsageError('no command given'));
  if (name === '--help' || name === '-h' || name === 'help') {
    const wanted = name === 'help' ? rest[0] : undefined;
    const command = commands.find((candidate) => candidate.name === wanted);
    if (wanted !== undefined && !command) return usageFailure(undefined, new UsageError(`unknown command ${JSON.stringify(wanted)}`));
    process.stdout.write(`${command ? command.help : topHelp(commands)}\n`);
    return 0;
  }
  if (name === '--version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    return usageFailure(
      undefined,
      new UsageError(name.startsWith('-') ? `unknown option ${name}` : `unknown command ${JSON.stringify(name)}`),
    );
  }
  if (wantsHelp(rest)) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  try {
    return await command.run(rest, context);
  } catch (error) {
    if (error instanceof UsageError || error instanceof CommandLineError) return usageFailure(command.name, error);
    report(command.name, isSystemError(error) ? describeSystemError(error) : String((error as Error)?.stack ?? error));
    return 1;
  }
}

function usageFailure(command: string | undefined, error: Error): number {
  const help = command === undefined ? 'acp-wire --help' : `acp-wire ${command} --help`;
  report(command, `${error.message} (see ${help})`);
  return 2;
}
