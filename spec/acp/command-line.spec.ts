import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { CommandLineError, splitCommandLine } from '../../lib';

describe('splitCommandLine()', () => {
  const cases: [string, string[]][] = [
    ['node agent.js', ['node', 'agent.js']],
    ['  node \t agent.js  --x  ', ['node', 'agent.js', '--x']],
    ['\n node agent.js\n \n', ['node', 'agent.js']],
    [`node "my agent.js" --name 'a b'`, ['node', 'my agent.js', '--name', 'a b']],
    [`a'b c'd`, ['ab cd']],
    [`x '' ""`, ['x', '', '']],
    [`echo 'it\\s "raw" $HOME'`, ['echo', 'it\\s "raw" $HOME']],
    [`echo "a \\"q\\" \\\\ \\$ \\\` \\n"`, ['echo', 'a "q" \\ $ ` \\n']],
    [`echo a\\ b \\'c\\'`, ['echo', 'a b', "'c'"]],
    ['echo a\\\nb', ['echo', 'ab']],
    ['echo "a\\\nb"', ['echo', 'ab']],
    ['node $HOME/x.js ~ *.js #c', ['node', '$HOME/x.js', '~', '*.js', '#c']],
    [`node -e "process.exit(3)" 'a|b;c'`, ['node', '-e', 'process.exit(3)', 'a|b;c']],
    ['echo \\|', ['echo', '|']],
    ['echo trailing\\', ['echo', 'trailing\\']],
    ['héllo "wörld ✓"', ['héllo', 'wörld ✓']],
  ];
  for (const [input, words] of cases) {
    it(`splits ${JSON.stringify(input)} into ${JSON.stringify(words)}`, () => {
      expect(splitCommandLine(input)).to.deep.equal(words);
    });
  }

  const refused: [string, RegExp][] = [
    [`node 'agent.js`, /single quote is not closed/],
    [`node "agent.js`, /double quote is not closed/],
    ['node "a\\"', /double quote is not closed/],
    ['', /no command/],
    [' \t\n', /no command/],
    ['\\\n', /no command/],
    ['node a.js | tee log', /`\|` needs a shell/],
    ['node a.js\nnode b.js', /newline between two commands/],
    ['a && b', /`&` needs a shell/],
    ['a; b', /`;` needs a shell/],
    ['a > out', /`>` needs a shell/],
    ['a < in', /`<` needs a shell/],
    ['(a)', /`\(` needs a shell/],
    ['echo `date`', /`\x60` needs a shell/],
  ];
  for (const [input, reason] of refused) {
    it(`throws CommandLineError for ${JSON.stringify(input)}`, () => {
      let thrown: unknown;
      try {
        splitCommandLine(input);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).to.be.instanceOf(CommandLineError).and.include({ code: 'ACP_WIRE_COMMAND_LINE', commandLine: input });
      expect((thrown as CommandLineError).reason).to.match(reason);
    });
  }

  it('splits every case without expansions into the words /bin/sh passes to a program', () => {
    // Expansions differ on purpose; a bare newline would end the shell's printf command.
    const plain = cases.filter(([input]) => !/[$~*#]|(^|[^\\])\n/.test(input)).map(([input]) => input);
    for (const input of plain) {
      const sh = spawnSync('/bin/sh', ['-c', `printf '%s\\0' ${input}`], { encoding: 'utf8' });
      expect(splitCommandLine(input), input).to.deep.equal(sh.stdout.split('\0').slice(0, -1));
    }
  });

  it('throws TypeError when the command line is not a string', () => {
    expect(() => splitCommandLine(42 as unknown as string)).to.throw(TypeError, /commandLine must be a string/);
  });
});
