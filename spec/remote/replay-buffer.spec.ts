/**
 * The replay buffer of a resumable stream, and the cursor stamped on each message's text.
 */
import { expect } from 'chai';
import { ReplayBuffer } from '../../lib/transports/remote/resume/replay-buffer';
import { backoffDelay, reconnectSettings, resumeSettings } from '../../lib/transports/remote/resume/resume-options';
import { STREAM_ACK_METHOD, controlMessage, isControlCandidate } from '../../lib/transports/remote/resume/control-messages';
import { takeCursor, TakenCursor } from '../../lib/transports/remote/resume/frame-cursor';
import { cursorNumberOf, cursorOf, stampCursor } from '../../lib/transports/remote/resume/stream-cursor';
import { seededRandom } from '../helpers/random';

describe('ReplayBuffer', () => {
  let now: number;
  const clock = (): number => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  it('numbers messages 1, 2, 3… and returns every one after a cursor, in order', () => {
    const buffer = new ReplayBuffer({ maxMessages: 10, maxAgeMs: 1000 }, clock);
    const cursors: number[] = [];
    for (const text of ['a', 'b', 'c']) {
      cursors.push(buffer.nextCursor);
      buffer.append(text);
    }
    expect(cursors).to.deep.equal([1, 2, 3]);
    expect(buffer.since('1')).to.deep.equal([
      { cursor: '2', text: 'b' },
      { cursor: '3', text: 'c' },
    ]);
    expect(buffer.since(null)!.map((e) => e.text)).to.deep.equal(['a', 'b', 'c']);
    expect(buffer.since('0')!.map((e) => e.text)).to.deep.equal(['a', 'b', 'c']);
    expect(buffer.since('3')).to.deep.equal([]);
    expect(buffer.lastCursor).to.equal('3');
  });

  it('holds at most maxMessages: a cursor before the oldest held is refused, not answered with a gap', () => {
    const buffer = new ReplayBuffer({ maxMessages: 3, maxAgeMs: 60_000 }, clock);
    for (let i = 1; i <= 5; i++) buffer.append(`m${i}`);
    expect(buffer.size).to.equal(3);
    expect(buffer.since('2')!.map((e) => e.text)).to.deep.equal(['m3', 'm4', 'm5']);
    expect(buffer.since('1')).to.equal(undefined);
    expect(buffer.since(null)).to.equal(undefined);
  });

  it('holds a message at most maxAgeMs', () => {
    const buffer = new ReplayBuffer({ maxMessages: 100, maxAgeMs: 1000 }, clock);
    buffer.append('old');
    now += 600;
    buffer.append('young');
    now += 500;
    expect(buffer.size).to.equal(1);
    expect(buffer.since('0')).to.equal(undefined);
    expect(buffer.since('1')!.map((e) => e.text)).to.deep.equal(['young']);
    now += 600;
    expect(buffer.size).to.equal(0);
    expect(buffer.since('1')).to.equal(undefined);
    expect(buffer.since('2')).to.deep.equal([]);
  });

  it('holds at most maxBytes of text, dropping the oldest', () => {
    const buffer = new ReplayBuffer({ maxMessages: 100, maxAgeMs: 60_000, maxBytes: 10 }, clock);
    for (const text of ['aaaa', 'bbbb', 'cccc', 'dd']) buffer.append(text);
    expect(buffer.since('1')!.map((e) => e.text)).to.deep.equal(['bbbb', 'cccc', 'dd']);
    expect(buffer.since('0')).to.equal(undefined);
    expect(buffer.size).to.equal(3);
    buffer.append('e'.repeat(20));
    expect(buffer.size).to.equal(0);
    expect(buffer.since('5')).to.deep.equal([]);
    expect(buffer.since('4')).to.equal(undefined);
  });

  it('refuses a cursor it never gave and one that is not a number', () => {
    const buffer = new ReplayBuffer({ maxMessages: 10, maxAgeMs: 1000 }, clock);
    buffer.append('a');
    expect(buffer.since('2')).to.equal(undefined);
    expect(buffer.since('x')).to.equal(undefined);
    expect(buffer.since('-1')).to.equal(undefined);
    expect(buffer.since('01')).to.equal(undefined);
  });

  it('lets go of the messages up to a cursor the client acknowledged, and of nothing for a cursor not its own', () => {
    const buffer = new ReplayBuffer({ maxMessages: 10, maxAgeMs: 1000 }, clock);
    for (const text of ['a', 'b', 'c', 'd']) buffer.append(text);
    buffer.release('2');
    expect(buffer.size).to.equal(2);
    expect(buffer.since('1')).to.equal(undefined);
    expect(buffer.since('2')!.map((e) => e.text)).to.deep.equal(['c', 'd']);
    for (const cursor of ['1', '5', 'x', '-1']) buffer.release(cursor);
    expect(buffer.size).to.equal(2);
    buffer.release('4');
    expect(buffer.size).to.equal(0);
    expect(buffer.since('4')).to.deep.equal([]);
  });

  it('keeps the right messages over many evictions (its rings wrapped around)', () => {
    const buffer = new ReplayBuffer({ maxMessages: 50, maxAgeMs: 60_000 }, clock);
    for (let i = 1; i <= 5000; i++) buffer.append(`m${i}`);
    expect(buffer.size).to.equal(50);
    const tail = buffer.since('4990')!;
    expect(tail.map((e) => e.cursor)).to.deep.equal(Array.from({ length: 10 }, (_, i) => String(4991 + i)));
    expect(tail.map((e) => e.text)).to.deep.equal(Array.from({ length: 10 }, (_, i) => `m${4991 + i}`));
  });

  // Small bounds wrap the rings around many times; large ones make them grow (64, 128, 256, 512) while wrapped.
  for (const { maxMessages, maxBytes, releases } of [
    { maxMessages: 12, maxBytes: 60, releases: 0.2 },
    { maxMessages: 300, maxBytes: 4_000, releases: 0.02 },
  ]) {
    it(`holds exactly what its bounds allow across releases and evictions (seeded, against a model; at most ${maxMessages} messages)`, () => {
      const random = seededRandom(7);
      const buffer = new ReplayBuffer({ maxMessages, maxAgeMs: 60_000, maxBytes }, clock);
      // The model: the cursors and texts held, oldest first.
      let held: { cursor: string; text: string }[] = [];
      let heldBytes = 0;
      let next = 1;
      const forgetOldest = (): void => void (heldBytes -= held.shift()!.text.length);
      for (let step = 0; step < 20_000; step++) {
        if (random() >= releases) {
          const text = 'x'.repeat(1 + Math.floor(random() * 9)) + String(next);
          buffer.append(text);
          held.push({ cursor: String(next++), text });
          heldBytes += text.length;
          if (held.length > maxMessages) forgetOldest();
          while (heldBytes > maxBytes) forgetOldest();
        } else if (held.length > 0) {
          const through = Number(held[Math.floor(random() * held.length)]!.cursor);
          if (random() < 0.5) buffer.release(String(through));
          else buffer.releaseThrough(through);
          held = held.filter((entry) => Number(entry.cursor) > through);
          heldBytes = held.reduce((bytes, entry) => bytes + entry.text.length, 0);
        }
        const after = held.length > 0 ? Number(held[0]!.cursor) - 1 : next - 1;
        expect(buffer.size, `step ${step}`).to.equal(held.length);
        // Compared as JSON text: every step checked, without a deep comparison's cost per entry.
        expect(JSON.stringify(buffer.since(String(after))), `step ${step}`).to.equal(JSON.stringify(held));
      }
    });
  }
});

describe('stream cursors on message text', () => {
  it('puts the cursor in params._meta of a notification, keeping its other bytes', () => {
    const line = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"n":1.50}}}';
    const stamped = stampCursor(line, '7');
    expect(JSON.parse(stamped)).to.deep.equal({
      jsonrpc: '2.0',
      method: 'session/update',
      params: { _meta: { 'acp/cursor': '7' }, sessionId: 's', update: { n: 1.5 } },
    });
    expect(stamped).to.include('1.50');
    expect(cursorOf(stamped)).to.equal('7');
  });

  it("adds to an existing params._meta, keeping the peer's members", () => {
    const stamped = stampCursor('{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"_meta":{"x":"y"}}}', '3');
    expect(JSON.parse(stamped).params).to.deep.equal({ a: 1, _meta: { 'acp/cursor': '3', x: 'y' } });
    expect(cursorOf(stamped)).to.equal('3');
    expect(JSON.parse(stampCursor('{"id":1,"method":"m","params":{"_meta":{}}}', '4')).params).to.deep.equal({
      _meta: { 'acp/cursor': '4' },
    });
  });

  it('puts it in result._meta of an answer with an object result, keeping the exact id bytes', () => {
    const stamped = stampCursor('{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}', '9');
    expect(stamped).to.equal('{"jsonrpc":"2.0","id":12345678901234567890,"result":{"_meta":{"acp/cursor":"9"}}}');
    expect(cursorOf(stamped)).to.equal('9');
  });

  it('puts it in a _meta of the message itself for an error answer or a non-object result', () => {
    const error = stampCursor('{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"no"}}', '2');
    expect(JSON.parse(error)).to.deep.equal({ _meta: { 'acp/cursor': '2' }, jsonrpc: '2.0', id: 'a', error: { code: -1, message: 'no' } });
    expect(cursorOf(error)).to.equal('2');
    const nullResult = stampCursor('{"jsonrpc":"2.0","id":1,"result":null}', '5');
    expect(JSON.parse(nullResult)._meta).to.deep.equal({ 'acp/cursor': '5' });
    expect(cursorOf(nullResult)).to.equal('5');
  });

  it('is not fooled by braces, quotes and the key inside strings, nor by whitespace', () => {
    const line =
      ' { "id" : 1 , "params" : { "text" : "}\\"acp/cursor\\":\\"99\\" {[" , "deep" : [ { "_meta" : { "acp/cursor" : "1" } } ] } } ';
    const stamped = stampCursor(line, '6');
    expect(JSON.parse(stamped).params.text).to.equal('}"acp/cursor":"99" {[');
    expect(cursorOf(stamped)).to.equal('6');
    expect(cursorOf(line)).to.equal(undefined);
  });

  it('stamps an empty message and an empty result as valid JSON', () => {
    expect(JSON.parse(stampCursor('{}', '1'))).to.deep.equal({ _meta: { 'acp/cursor': '1' } });
    expect(JSON.parse(stampCursor('{"id":1,"result":{ }}', '2'))).to.deep.equal({ id: 1, result: { _meta: { 'acp/cursor': '2' } } });
    expect(JSON.parse(stampCursor('{"_meta":{"a":1},"id":1,"error":{"code":1,"message":"m"}}', '3'))._meta).to.deep.equal({
      'acp/cursor': '3',
      a: 1,
    });
  });

  it('finds an existing _meta written with escapes, and is not misled by a "_meta" string value', () => {
    const escaped = stampCursor('{"id":1,"method":"m","params":{"a":1,"_m\\u0065ta":{"x":2}}}', '8');
    expect(JSON.parse(escaped).params).to.deep.equal({ a: 1, _meta: { 'acp/cursor': '8', x: 2 } });
    expect(cursorOf(escaped)).to.equal('8');
    const value = stampCursor('{"id":1,"method":"m","params":{"name":"_meta","n":[1,{"_meta":{}}]}}', '9');
    expect(JSON.parse(value).params).to.deep.equal({ _meta: { 'acp/cursor': '9' }, name: '_meta', n: [1, { _meta: {} }] });
  });

  it('reads a cursor as a number only when it is a decimal integer', () => {
    expect(cursorNumberOf(stampCursor('{"id":1,"result":{"ok":true}}', '123456789012345'))).to.equal(123456789012345);
    expect(cursorNumberOf('{"id":1,"result":{"_meta":{"acp/cursor":"0"}}}')).to.equal(0);
    expect(cursorNumberOf('{"id":1,"result":{"_meta":{"acp/cursor":"007"}}}')).to.equal(undefined);
    expect(cursorNumberOf('{"id":1,"result":{"_meta":{"acp/cursor":"7a"}}}')).to.equal(undefined);
    expect(cursorNumberOf('{"id":1,"result":{"_meta":{"acp/cursor":""}}}')).to.equal(undefined);
    expect(cursorNumberOf('{"id":1,"result":{"_meta":{"acp/cursor":"1234567890123456"}}}')).to.equal(undefined);
    expect(cursorNumberOf('{"id":1,"result":{"ok":true}}')).to.equal(undefined);
  });

  it('leaves text that is not a JSON object unchanged', () => {
    expect(stampCursor('[1,2]', '1')).to.equal('[1,2]');
    expect(stampCursor('not json', '1')).to.equal('not json');
    const badEscape = '{"id":1,"x\\q":{},"params":{"a":1}}';
    expect(stampCursor(badEscape, '1')).to.equal(badEscape);
    expect(cursorOf('{"x\\q":{},"_meta":{"acp/cursor":"1"}}')).to.equal(undefined);
    expect(cursorOf('{"id":1,"params":{"_meta":{"acp/cursor":3}}}')).to.equal(undefined);
  });
});

describe('stream cursors on frames (the client)', () => {
  /** Takes the cursor out of the frame of `text`: the cursor, where the message starts, and its text then. */
  const take = (text: string): { cursor: number | undefined; start: number; text: string } => {
    const frame = Buffer.from(text);
    const taken = new TakenCursor();
    takeCursor(frame, taken);
    return { cursor: taken.cursor, start: taken.start, text: frame.subarray(taken.start).toString() };
  };

  it('takes the stamp first in params/result out by moving the bytes before it: the message parses as the agent sent it', () => {
    for (const line of [
      '{"jsonrpc":"2.0","id":12,"result":{"text":"hé, \\"quoted\\"","n":[1,{"a":{}}]}}',
      '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"n":1.50}}}',
      '{"jsonrpc":"2.0","id":"req-1","method":"fs/read_text_file","params":{"path":"/x"}}',
      '{"jsonrpc":"2.0","id":3,"result":{}}',
      '{"result":{"a":1},"jsonrpc":"2.0","id":4}',
      '{"jsonrpc":"2.0","x":[1],"params":{"a":1}}',
      '{"jsonrpc":"2.0","i\\u0064":5,"result":{"a":1}}',
    ]) {
      const taken = take(stampCursor(line, 41));
      expect(taken.cursor, line).to.equal(41);
      expect(taken.start, line).to.be.greaterThan(0);
      expect(taken.text, line).to.equal(line);
    }
  });

  it("takes only the cursor out of an agent's own _meta, which keeps its members", () => {
    const taken = take(stampCursor('{"jsonrpc":"2.0","method":"m","params":{"_meta":{"trace":"t"},"a":1}}', 7));
    expect(taken.cursor).to.equal(7);
    expect(JSON.parse(taken.text).params).to.deep.equal({ _meta: { trace: 't' }, a: 1 });
  });

  it("takes it out of an error answer's own _meta, from inside an agent's _meta and from behind other members, leaving valid JSON", () => {
    for (const line of [
      '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}',
      '{"jsonrpc":"2.0","id":1,"result":null}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":1,"_meta":{"t":1}}}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":1,"_meta":{}}}',
      '{"jsonrpc":"2.0","method":"m","params":{"a":1,"_meta":{},"b":2}}',
      '{"jsonrpc":"2.0","a":[{"x":1}],"params":{"b":1}}',
      '{"jsonrpc":"2.0","id":5,"s":"{\\"result\\":{","result":{"a":1}}',
      '{ "jsonrpc":"2.0", "id":1,"result": {"a":1}}',
    ]) {
      const taken = take(stampCursor(line, 12));
      expect(taken.cursor, line).to.equal(12);
      expect(taken.text, line).not.to.include('acp/cursor');
      expect(JSON.parse(taken.text), line).to.deep.equal(JSON.parse(line));
    }
  });

  it('finds no cursor where none was stamped, whatever looks like one elsewhere, and leaves the frame as it is', () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"result":{"a":1}}',
      '{"jsonrpc":"2.0","id":1,"result":{"_meta":{"acp/cursor":"x1"}}}',
      '{"jsonrpc":"2.0","id":1,"myresult":{"_meta":{"acp/cursor":"9"}},"result":{"a":1}}',
      '{"jsonrpc":"2.0","x\\"result":{"_meta":{"acp/cursor":"9"}},"result":{"a":1}}',
      '{"jsonrpc":"2.0","id":1,"a":{"result":{"_meta":{"acp/cursor":"9"}}},"result":{"b":1}}',
      '{"jsonrpc":"2.0","id":1,"s":"x\\",\\"result\\":{\\"_meta\\":{\\"acp/cursor\\":\\"9\\"}}"}',
      '{"jsonrpc":"2.0","id":1,"x":"\\"result\\":{\\"_meta\\":{\\"acp/cursor\\":\\"9\\"}}","result":{"a":1}}',
    ]) {
      expect(take(text), text).to.deep.equal({ cursor: undefined, start: 0, text });
    }
  });

  it('leaves a frame that is not a whole JSON object as it is (the connection then reports it)', () => {
    for (const text of ['{"jsonrpc":"2.0","id":1,"result":{"_meta":{"acp/cursor":"1"', '{"jsonrpc":"2.0","id":1,"res', 'not json', '']) {
      const taken = take(text);
      expect(taken.start, text).to.equal(0);
      expect(taken.text, text).to.equal(text);
    }
  });

  it('takes the cursor out of any stamped message (seeded shapes)', () => {
    const random = seededRandom(20261202);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    for (let n = 1; n <= 2000; n++) {
      const space = pick(['', ' ', '\n ']);
      const head = pick([`"id":${n}`, `"id":"r${n}"`, '"method":"session/update"', `"id":${n},"method":"x/y"`, `"id":-${n}.5`, '"x":{}']);
      const holder = pick(['params', 'result', 'error']);
      const body = pick(['{}', '{"a":1}', '{"_meta":{"k":"v"},"t":"\\u00e9\\""}', '{"t":"}{,\\"_meta\\""}', '[1]', 'null']);
      const line = `{${space}"jsonrpc":"2.0",${space}${head},"${holder}":${space}${body}}`;
      const taken = take(stampCursor(line, n));
      expect(taken.cursor, line).to.equal(n);
      expect(JSON.parse(taken.text), line).to.deep.equal(JSON.parse(line));
    }
  });

  it('tells control messages from agent messages by their first bytes', () => {
    expect(isControlCandidate(Buffer.from(controlMessage(STREAM_ACK_METHOD, { received: 3 })))).to.equal(true);
    expect(isControlCandidate(Buffer.from('{"jsonrpc":"2.0","method":"stream/x"}'))).to.equal(true);
    expect(isControlCandidate(Buffer.from('{"jsonrpc":"2.0","method":"session/update","params":{}}'))).to.equal(false);
    expect(isControlCandidate(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"stream/ack"}'))).to.equal(false);
    expect(isControlCandidate(Buffer.from('{"jsonrpc":"2.0"}'))).to.equal(false);
  });
});

describe('resume and reconnect options', () => {
  it('fills in the defaults and refuses invalid values naming them', () => {
    expect(resumeSettings(undefined)).to.equal(undefined);
    expect(resumeSettings(true)).to.deep.equal({ bufferMessages: 1000, bufferMs: 300_000, graceMs: 60_000 });
    expect(() => resumeSettings({ bufferMessages: 0 })).to.throw(RangeError, 'resume.bufferMessages');
    expect(() => resumeSettings({ graceMs: -1 })).to.throw(RangeError, 'resume.graceMs');
    expect(() => reconnectSettings({ attempts: 1.5 })).to.throw(RangeError, 'reconnect.attempts');
    expect(() => reconnectSettings({ silenceMs: -5 })).to.throw(RangeError, 'reconnect.silenceMs');
    expect(() => reconnectSettings({ heartbeatMs: -5 })).to.throw(RangeError, 'reconnect.heartbeatMs');
    expect(reconnectSettings(true)).to.include({ attempts: 8, minDelayMs: 100, maxDelayMs: 5000, silenceMs: 75_000, heartbeatMs: 15_000 });
    expect(() => reconnectSettings({ minDelayMs: 100, maxDelayMs: 10 })).to.throw(RangeError, 'reconnect.maxDelayMs');
  });

  it('backs off exponentially up to maxDelayMs, with jitter', () => {
    const settings = reconnectSettings({ minDelayMs: 100, maxDelayMs: 1000 })!;
    expect([1, 2, 3, 4, 5, 10].map((attempt) => backoffDelay(settings, attempt, () => 1))).to.deep.equal([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay(settings, 4, () => 0.5)).to.equal(400);
    expect(backoffDelay(settings, 1, () => 0)).to.equal(50);
  });
});
