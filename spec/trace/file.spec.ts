/**
 * TraceFileWriter, parseTraceText and TraceStore on their own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { TraceFileWriter, TraceStore, parseTraceText, type TraceEvent } from '../../lib/trace';
import { tempDir } from './helpers';

function note(ts: number, params: unknown = null): TraceEvent {
  return { type: 'notification', ts, protocol: 'acp', from: 'Client', to: 'Agent', method: 'n', params: params as null };
}

describe('TraceFileWriter', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('writes one JSON object per line, each on disk as soon as it is written', () => {
    const path = join(dir.path, 't.jsons');
    using file = TraceFileWriter.open(path);
    file.write(note(0.5));
    expect(readFileSync(path, 'utf8')).to.equal(
      '{"type":"notification","ts":0.5,"protocol":"acp","from":"Client","to":"Agent","method":"n","params":null}\n',
    );
    file.write(note(1));
    expect(readFileSync(path, 'utf8').split('\n')).to.have.length(3);
  });

  it('keeps an event whose params JSON cannot write, with a note in their place', () => {
    const path = join(dir.path, 't.jsons');
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    using file = TraceFileWriter.open(path);
    file.write(note(0, deep));
    file.write(note(1));
    const [first, second] = parseTraceText(readFileSync(path, 'utf8'));
    expect((first as { params: unknown }).params).to.match(/^\[not traced: /);
    expect(second).to.deep.equal(note(1));
  });

  it('does nothing once closed', () => {
    const path = join(dir.path, 't.jsons');
    const file = TraceFileWriter.open(path);
    file.close();
    file.close();
    file.write(note(0));
    expect(readFileSync(path, 'utf8')).to.equal('');
  });

  it('rejects an empty path with a TypeError naming the option', () => {
    expect(() => TraceFileWriter.open('')).to.throw(TypeError, 'traceFile');
  });
});

describe('parseTraceText()', () => {
  it('ignores blank lines, lines that are not JSON objects and a last line without its newline', () => {
    const text = `${JSON.stringify(note(0))}\n\n[1]\nnot json\n${JSON.stringify(note(1))}\n{"type":"notifi`;
    expect(parseTraceText(text)).to.deep.equal([note(0), note(1)]);
  });
});

describe('TraceStore', () => {
  it('numbers events from 0 and returns those since a count', () => {
    const store = new TraceStore();
    for (let i = 0; i < 5; i++) store.push(note(i));
    expect(store.count).to.equal(5);
    expect(store.since(3).map((event) => event.ts)).to.deep.equal([3, 4]);
    expect(store.since(9)).to.deep.equal([]);
  });

  it('keeps at most maxEvents, dropping the oldest, without renumbering', () => {
    const store = new TraceStore({ maxEvents: 3 });
    for (let i = 0; i < 5000; i++) store.push(note(i));
    expect(store.count).to.equal(5000);
    expect(store.since(0).map((event) => event.ts)).to.deep.equal([4997, 4998, 4999]);
    expect(store.since(4999).map((event) => event.ts)).to.deep.equal([4999]);
  });

  it('rejects a maxEvents that is not a positive integer', () => {
    expect(() => new TraceStore({ maxEvents: 0 })).to.throw(RangeError, 'maxEvents');
  });
});
