/**
 * Splits a command string into words the way a POSIX shell would, without running a shell.
 *
 * @packageDocumentation
 */
import { AcpWireError } from '../jsonrpc/errors';

/** A command string could not be split: an unterminated quote, a shell operator, or no words. */
export class CommandLineError extends AcpWireError {
  /** Always `'CommandLineError'`. */
  override readonly name = 'CommandLineError';
  /** Always `'ACP_WIRE_COMMAND_LINE'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_COMMAND_LINE';
  /**
   * @param commandLine - the command string that was given
   * @param reason - what is wrong with it
   */
  constructor(
    readonly commandLine: string,
    readonly reason: string,
  ) {
    super(`cannot split the command ${JSON.stringify(commandLine)}: ${reason}`);
  }
}

/** Word separators; a newline is one only before or after the command (between two it needs a shell). */
const BLANKS = ' \t\n';
const OPERATORS = '|&;<>()`';
/** Characters a backslash escapes inside double quotes; before anything else it stays literal. */
const DOUBLE_QUOTE_ESCAPES = '$`"\\';

/**
 * Splits `commandLine` into words as a POSIX shell does, without a shell.
 *
 * @remarks
 * - Spaces and tabs separate words, and so do newlines before or after the command (between two
 *   commands a newline needs a shell: refused); adjacent quoted and unquoted parts join into one
 *   word (`a'b c'd` is `ab cd`); `''` and `""` make an empty word.
 * - Single quotes keep everything literally. Inside double quotes a backslash escapes only
 *   `$`, `` ` ``, `"`, `\` and a newline (removed); elsewhere it stays. Outside quotes a backslash
 *   makes the next character literal; a backslash-newline is removed.
 * - Nothing is expanded: `$VAR`, `~`, `*` and `#` are literal characters.
 * - Unquoted `|`, `&`, `;`, `<`, `>`, `(`, `)` and `` ` `` need a shell: they are refused.
 *
 * @returns the words; the first is the program
 * @throws CommandLineError for an unterminated quote, an unquoted shell operator or a newline
 * between commands, or no words
 * @example
 * ```ts
 * splitCommandLine(`node "my agent.js" --name 'a b'`); // ['node', 'my agent.js', '--name', 'a b']
 * ```
 */
export function splitCommandLine(commandLine: string): string[] {
  if (typeof commandLine !== 'string') throw new TypeError('commandLine must be a string');
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < commandLine.length) {
    const c = commandLine[i]!;
    if (BLANKS.includes(c)) {
      if (c === '\n' && (inWord || words.length > 0) && commandLine.slice(i + 1).trim() !== '') {
        throw new CommandLineError(commandLine, 'a newline between two commands needs a shell');
      }
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    if (OPERATORS.includes(c)) {
      throw new CommandLineError(commandLine, `\`${c}\` needs a shell; quote it, or run the command with \`sh -c\``);
    }
    const part = readPart(commandLine, i);
    word += part.text;
    // A backslash-newline joins lines without starting a word.
    inWord ||= part.isWord;
    i = part.end;
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw new CommandLineError(commandLine, 'there is no command in it');
  return words;
}

interface Part {
  text: string;
  end: number;
  isWord: boolean;
}

/** Reads one quoted string, one escaped character, or one plain character starting at `start`. */
function readPart(line: string, start: number): Part {
  const c = line[start]!;
  if (c === "'") {
    const close = line.indexOf("'", start + 1);
    if (close === -1) throw new CommandLineError(line, 'a single quote is not closed');
    return { text: line.slice(start + 1, close), end: close + 1, isWord: true };
  }
  if (c === '"') return readDoubleQuoted(line, start);
  if (c === '\\') {
    if (start + 1 >= line.length) return { text: '\\', end: start + 1, isWord: true };
    const next = line[start + 1]!;
    if (next === '\n') return { text: '', end: start + 2, isWord: false };
    return { text: next, end: start + 2, isWord: true };
  }
  return { text: c, end: start + 1, isWord: true };
}

function readDoubleQuoted(line: string, start: number): Part {
  let text = '';
  let i = start + 1;
  while (i < line.length) {
    const c = line[i]!;
    if (c === '"') return { text, end: i + 1, isWord: true };
    if (c === '\\' && i + 1 < line.length) {
      const next = line[i + 1]!;
      if (next === '\n') {
        i += 2;
        continue;
      }
      if (DOUBLE_QUOTE_ESCAPES.includes(next)) {
        text += next;
        i += 2;
        continue;
      }
    }
    text += c;
    i++;
  }
  throw new CommandLineError(line, 'a double quote is not closed');
}
