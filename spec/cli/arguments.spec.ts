import { expect } from 'chai';
import { UsageError, parseCommandArguments, parseDecimal, parseMilliseconds, parsePort, wantsHelp } from '../../lib/cli/arguments';
import { parseListen } from '../../lib/cli/remote-conduct';

const OPTIONS = { trace: { type: 'boolean' }, tcp: { type: 'string' } } as const;

describe('acp-wire arguments', () => {
  describe('parsePort()', () => {
    it('accepts decimal integers from 0 to 65535', () => {
      expect(['0', '1', '8080', '65535', '007'].map((text) => parsePort('--tcp', text))).to.deep.equal([0, 1, 8080, 65535, 7]);
    });

    for (const text of ['0x10', '1e3', ' 0', '0 ', '-1', '+1', '65536', '1.5', '', 'Infinity', '١٢']) {
      it(`refuses ${JSON.stringify(text)} with a UsageError naming the option and the value`, () => {
        expect(() => parsePort('--tcp', text)).to.throw(UsageError, `--tcp needs a port from 0 to 65535, got ${JSON.stringify(text)}`);
      });
    }
  });

  describe('parseMilliseconds()', () => {
    it('accepts 0 to 2^31 - 1 and refuses 2^31', () => {
      expect(parseMilliseconds('--idle-timeout', '0')).to.equal(0);
      expect(parseMilliseconds('--idle-timeout', '2147483647')).to.equal(2 ** 31 - 1);
      expect(() => parseMilliseconds('--idle-timeout', '2147483648')).to.throw(
        UsageError,
        /^--idle-timeout needs a number of milliseconds/,
      );
    });
  });

  describe('parseDecimal()', () => {
    it('refuses a value below the minimum', () => {
      expect(() => parseDecimal('--max-chains', '0', 'a number', 1, 10)).to.throw(
        UsageError,
        '--max-chains needs a number from 1 to 10, got "0"',
      );
    });
  });

  describe('parseCommandArguments()', () => {
    it('returns option values and positionals in order, options anywhere before --', () => {
      expect(parseCommandArguments(['a b', '--trace', '--tcp', '5', 'c', '--', '--tcp'], OPTIONS)).to.deep.equal({
        values: { trace: true, tcp: '5' },
        positionals: ['a b', 'c', '--tcp'],
      });
    });

    for (const [argv, message] of [
      [['--nope'], 'unknown option --nope'],
      [['-x'], 'unknown option -x'],
      [['--tcp'], '--tcp needs a value'],
      [['--trace=yes'], '--trace takes no value'],
      [['--tcp', '-x'], '--tcp needs a value; write --tcp=VALUE for a value that starts with -'],
    ] as const) {
      it(`throws a one-line UsageError for ${argv.join(' ')}: ${message}`, () => {
        expect(() => parseCommandArguments(argv, OPTIONS))
          .to.throw(UsageError)
          .with.property('message', message);
      });
    }

    it('passes a negative number to the option, so that its own check names it (--tcp -1)', () => {
      expect(parseCommandArguments(['--tcp', '-1', 'x'], OPTIONS).values.tcp).to.equal('-1');
    });
  });

  describe('wantsHelp()', () => {
    it('finds --help or -h among other arguments, even unknown ones', () => {
      expect(wantsHelp(['--nope', 'x', '-h'])).to.equal(true);
      expect(wantsHelp(['--help'])).to.equal(true);
    });

    it('does not take -h after -- (a positional) for a help request', () => {
      expect(wantsHelp(['--', '-h'])).to.equal(false);
      expect(wantsHelp(['node agent.js'])).to.equal(false);
    });
  });

  describe('parseListen() (conduct --listen)', () => {
    const accepted: [string, ReturnType<typeof parseListen>][] = [
      ['4000', { host: undefined, port: 4000, path: '/acp' }],
      ['0.0.0.0:0', { host: '0.0.0.0', port: 0, path: '/acp' }],
      ['[::1]:4000', { host: '::1', port: 4000, path: '/acp' }],
      ['ws://localhost:4000/agents/one', { host: 'localhost', port: 4000, path: '/agents/one' }],
      ['ws://127.0.0.1:80/', { host: '127.0.0.1', port: 80, path: '/acp' }],
      ['ws://[::1]:0', { host: '::1', port: 0, path: '/acp' }],
      ['ws://example.test', { host: 'example.test', port: 80, path: '/acp' }],
    ];
    for (const [text, address] of accepted) {
      it(`reads ${text}`, () => {
        expect(parseListen(text)).to.deep.equal(address);
      });
    }

    for (const [text, message] of [
      ['0x10', '--listen needs a port from 0 to 65535, got "0x10"'],
      ['host:', '--listen needs a port from 0 to 65535, got ""'],
      [':4000', '--listen needs PORT, HOST:PORT or ws://HOST:PORT/PATH, got ":4000"'],
      ['::1:4000', '--listen needs PORT, HOST:PORT or ws://HOST:PORT/PATH, got "::1:4000"'],
      ['wss://h:1/acp', '--listen serves ws:// only (put a TLS proxy in front of it for wss://), got "wss://h:1/acp"'],
      ['ws://h:1/acp?x=1', '--listen takes no query or fragment, got "ws://h:1/acp?x=1"'],
    ] as const) {
      it(`refuses ${JSON.stringify(text)} with a UsageError: ${message}`, () => {
        expect(() => parseListen(text))
          .to.throw(UsageError)
          .with.property('message', message);
      });
    }
  });
});
