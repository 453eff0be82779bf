import { expect } from 'chai';
import { createStderrLogger, defaultLogger, silentLogger, type LogLevel } from '../lib';
import { briefly, logLazily } from '../lib/support/logger';

const LEVELS: LogLevel[] = ['trace', 'debug', 'warn', 'error'];
const RECORD = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z( \S+)? (trace|debug|warn|error) .*\n$/;

/** A logger writing into an array, and the records it wrote. */
function capture(level?: LogLevel, name?: string): { records: string[]; log: (l: LogLevel, m: string) => void; traces: boolean } {
  const records: string[] = [];
  const logger = createStderrLogger({ level, name, write: (text) => records.push(text) });
  return { records, log: (l, m) => logger.log(l, m), traces: logger.traces };
}

/** Runs `fn` with process.stderr.write replaced by a recorder; returns what was written. */
function captureStderr(fn: () => void): string[] {
  const written: string[] = [];
  const original = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    fn();
  } finally {
    process.stderr.write = original;
  }
  return written;
}

/** Runs `fn` with ACP_WIRE_LOG set to `value` (or unset), restoring it afterwards. */
function withLogEnv<T>(value: string | undefined, fn: () => T): T {
  const saved = process.env.ACP_WIRE_LOG;
  if (value === undefined) delete process.env.ACP_WIRE_LOG;
  else process.env.ACP_WIRE_LOG = value;
  try {
    return fn();
  } finally {
    if (saved === undefined) delete process.env.ACP_WIRE_LOG;
    else process.env.ACP_WIRE_LOG = saved;
  }
}

describe('logger', () => {
  describe('silentLogger', () => {
    it('does not trace, writes nothing and is frozen', () => {
      const written = captureStderr(() => silentLogger.log('error', 'x'));
      expect(written).to.deep.equal([]);
      expect(silentLogger.traces).to.equal(false);
      expect(Object.isFrozen(silentLogger)).to.equal(true);
    });
  });

  describe('createStderrLogger()', () => {
    it('writes warn and error but not debug or trace by default', () => {
      const logger = capture();
      for (const level of LEVELS) logger.log(level, `at ${level}`);
      expect(logger.records.map((r) => r.split(' ').slice(1).join(' '))).to.deep.equal(['warn at warn\n', 'error at error\n']);
      expect(logger.traces).to.equal(false);
    });

    const expected: Record<LogLevel, LogLevel[]> = {
      trace: ['trace', 'debug', 'warn', 'error'],
      debug: ['debug', 'warn', 'error'],
      warn: ['warn', 'error'],
      error: ['error'],
    };
    for (const level of LEVELS) {
      it(`writes ${expected[level].join(', ')} at level ${level}`, () => {
        const logger = capture(level);
        for (const l of LEVELS) logger.log(l, 'm');
        expect(logger.records.map((r) => r.split(' ')[1])).to.deep.equal(expected[level]);
      });
    }

    it('traces only at level trace', () => {
      expect(LEVELS.map((level) => capture(level).traces)).to.deep.equal([true, false, false, false]);
    });

    it('writes one line per record: ISO time, name, level, message', () => {
      const logger = capture('warn', 'agent');
      logger.log('error', 'it broke');
      expect(logger.records).to.have.length(1);
      expect(logger.records[0]).to.match(RECORD);
      expect(logger.records[0]!.split(' ').slice(1).join(' ')).to.equal('agent error it broke\n');
    });

    it('leaves the name out when none is given', () => {
      const logger = capture('warn');
      logger.log('warn', 'hello');
      expect(logger.records[0]!.split(' ').slice(1).join(' ')).to.equal('warn hello\n');
    });

    it('writes to process.stderr by default', () => {
      const written = captureStderr(() => createStderrLogger({ name: 'x' }).log('error', 'to stderr'));
      expect(written).to.have.length(1);
      expect(written[0]).to.match(RECORD).and.include(' x error to stderr');
    });

    for (const level of ['info', 'TRACE', '', 'toString', 'constructor', '__proto__']) {
      it(`throws RangeError for the level ${JSON.stringify(level)}`, () => {
        expect(() => createStderrLogger({ level: level as LogLevel })).to.throw(RangeError, /level/);
      });
    }
  });

  describe('defaultLogger()', () => {
    for (const value of [undefined, '', 'verbose', 'toString', 'constructor', 'hasOwnProperty']) {
      it(`is the silent logger when ACP_WIRE_LOG is ${JSON.stringify(value)}`, () => {
        expect(withLogEnv(value, () => defaultLogger('n'))).to.equal(silentLogger);
      });
    }

    it('traces when ACP_WIRE_LOG is trace', () => {
      expect(withLogEnv('trace', () => defaultLogger().traces)).to.equal(true);
    });

    it('writes records at and above the level ACP_WIRE_LOG names to stderr, with the name', () => {
      const logger = withLogEnv('warn', () => defaultLogger('client'));
      const written = captureStderr(() => {
        logger.log('debug', 'hidden');
        logger.log('warn', 'shown');
      });
      expect(written).to.have.length(1);
      expect(written[0]).to.match(RECORD).and.include(' client warn shown');
    });
  });

  describe('isEnabled()', () => {
    it('says no level is enabled on the silent logger', () => {
      expect(LEVELS.map((level) => silentLogger.isEnabled!(level))).to.deep.equal([false, false, false, false]);
    });

    it('says which levels a stderr logger writes', () => {
      const logger = createStderrLogger({ level: 'debug', write: () => {} });
      expect(LEVELS.map((level) => logger.isEnabled!(level))).to.deep.equal([false, true, true, true]);
    });
  });

  describe('logLazily()', () => {
    it('does not build the message when the level is off', () => {
      let built = 0;
      logLazily(createStderrLogger({ level: 'error', write: () => {} }), 'warn', () => String(++built));
      expect(built).to.equal(0);
    });

    it('builds and logs it when the level is on, or when the logger cannot say', () => {
      const records: string[] = [];
      logLazily(createStderrLogger({ write: (text) => records.push(text) }), 'warn', () => 'on');
      logLazily({ traces: false, log: (_level, message) => records.push(message) }, 'debug', () => 'unknown');
      expect(records.map((record) => record.trimEnd().split(' ').pop())).to.deep.equal(['on', 'unknown']);
    });
  });

  describe('briefly()', () => {
    it('describes a small value as its JSON', () => {
      expect(briefly({ a: [1, 'x', null, true] })).to.equal('{"a":[1,"x",null,true]}');
    });

    it('cuts a long description after 200 characters, ending it with …', () => {
      const text = briefly({ big: 'y'.repeat(10_000), more: [1, 2, 3] });
      expect(text).to.have.length(201);
      expect(text.startsWith('{"big":"yyy')).to.equal(true);
      expect(text.endsWith('…')).to.equal(true);
    });

    it('stops walking an array of a million items once it has 200 characters', () => {
      expect(briefly(Array.from({ length: 1_000_000 }, (_, i) => i))).to.have.length(201);
    });

    it('shows nesting deeper than 20 levels as …', () => {
      let deep: unknown = 'core';
      for (let i = 0; i < 100_000; i++) deep = [deep];
      expect(briefly(deep)).to.equal(`${'['.repeat(20)}…${']'.repeat(20)}`);
    });

    it('never throws: a value with a throwing getter is described by its tag', () => {
      const hostile = {
        get boom(): never {
          throw new Error('getter');
        },
      };
      expect(briefly(hostile)).to.equal('[object Object]');
    });
  });
});
