/**
 * Messages that carry an output's `_meta` entry from the moment they are serialized (a resumable
 * stream's cursor): the encoders write it first into `result._meta` / `params._meta` where they
 * can, and the writer has the output's port stamp every other message.
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { notificationLine, notificationLineWithMeta, responseLine, responseLineWithMeta } from '../lib/framing/lines';
import type { MetaStamp } from '../lib/framing/meta-stamp';
import { MESSAGE_PORT, type MessagePort } from '../lib/framing/message-port';
import { LineWriter } from '../lib/framing/writer';
import { SerializationError } from '../lib/jsonrpc/errors';

/** A stamp that hands out `"k":"1"`, `"k":"2"`, … and counts what it handed out (the encoders never stamp text). */
function entries(): MetaStamp & { taken: number } {
  const source = {
    taken: 0,
    takeEntry: () => `"k":"${++source.taken}"`,
    stamp: (): string => {
      throw new Error('the encoders take entries, they stamp no text');
    },
  };
  return source;
}

describe('messages serialized with an output _meta entry', () => {
  it("writes the entry first into a result object's _meta, the rest byte for byte as without it", () => {
    const meta = entries();
    const plain = responseLine(7, undefined, { a: 'é"', b: [1, { c: null }] }, undefined);
    const stamped = responseLineWithMeta(7, undefined, { a: 'é"', b: [1, { c: null }] }, undefined, meta);
    expect(stamped).to.equal('{"jsonrpc":"2.0","id":7,"result":{"_meta":{"k":"1"},"a":"é\\"","b":[1,{"c":null}]}}');
    expect(stamped.replace('"_meta":{"k":"1"},', '')).to.equal(plain);
    expect(responseLineWithMeta('r"1', undefined, {}, undefined, meta)).to.equal(
      '{"jsonrpc":"2.0","id":"r\\"1","result":{"_meta":{"k":"2"}}}',
    );
    expect(responseLineWithMeta(9, '9.0', { a: 1 }, undefined, meta)).to.equal(
      '{"jsonrpc":"2.0","id":9.0,"result":{"_meta":{"k":"3"},"a":1}}',
    );
    expect(meta.taken).to.equal(3);
  });

  it('writes it into params._meta of a notification', () => {
    const meta = entries();
    expect(notificationLineWithMeta('session/update', { sessionId: 's' }, meta)).to.equal(
      '{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"k":"1"},"sessionId":"s"}}',
    );
    expect(notificationLineWithMeta('n', undefined, meta)).to.equal('{"jsonrpc":"2.0","method":"n"}');
    expect(meta.taken).to.equal(1);
  });

  it('writes it first where the value has no _meta of its own (a nested one, a string, an inherited one), plain or class instance', () => {
    const meta = entries();
    expect(responseLineWithMeta(1, undefined, { a: '_meta', b: { _meta: { x: 1 } } }, undefined, meta)).to.equal(
      '{"jsonrpc":"2.0","id":1,"result":{"_meta":{"k":"1"},"a":"_meta","b":{"_meta":{"x":1}}}}',
    );
    expect(responseLineWithMeta('s"1', undefined, { '\\u005fmeta': 1 }, undefined, meta)).to.equal(
      '{"jsonrpc":"2.0","id":"s\\"1","result":{"_meta":{"k":"2"},"\\\\u005fmeta":1}}',
    );
    class Instance {
      readonly a = 1;
    }
    expect(responseLineWithMeta(2, undefined, new Instance() as never, undefined, meta)).to.equal(
      '{"jsonrpc":"2.0","id":2,"result":{"_meta":{"k":"3"},"a":1}}',
    );
    expect(responseLineWithMeta(3, undefined, Object.assign(Object.create(null) as object, { b: 2 }) as never, undefined, meta)).to.equal(
      '{"jsonrpc":"2.0","id":3,"result":{"_meta":{"k":"4"},"b":2}}',
    );
    // JSON.stringify writes no inherited member.
    expect(responseLineWithMeta(4, undefined, Object.create({ _meta: { inherited: true } }) as never, undefined, meta)).to.equal(
      '{"jsonrpc":"2.0","id":4,"result":{"_meta":{"k":"5"}}}',
    );
    expect(meta.taken).to.equal(5);
  });

  it('takes no entry where it cannot write it first into its own object: the port then stamps the whole message', () => {
    const meta = entries();
    const toJson = { toJSON: () => ({ x: 1 }) };
    for (const [result, error] of [
      [{ _meta: { trace: 't' }, a: 1 }, undefined],
      [{ _meta: undefined, a: 1 }, undefined],
      [new String('boxed'), undefined],
      [[1, 2], undefined],
      [null, undefined],
      ['text', undefined],
      [toJson, undefined],
      [undefined, { code: -1, message: 'no' }],
    ] as const) {
      expect(responseLineWithMeta(1, undefined, result as never, error, meta)).to.equal(responseLine(1, undefined, result as never, error));
    }
    expect(notificationLineWithMeta('m', [1], meta)).to.equal('{"jsonrpc":"2.0","method":"m","params":[1]}');
    const throwing = {
      get _meta(): never {
        throw new Error('no _meta today');
      },
    };
    expect(() => responseLineWithMeta(1, undefined, throwing as never, undefined, meta)).to.throw(SerializationError);
    expect(meta.taken).to.equal(0);
  });
});

describe('a LineWriter over a port that wants an entry on every message', () => {
  /** An output whose port numbers messages as the resumable streams do. */
  function stampingOutput(): { out: PassThrough; sent: string[]; next: () => number } {
    const out = new PassThrough();
    const sent: string[] = [];
    let next = 1;
    const port: MessagePort = {
      receiveFrames: () => true,
      canSendMessages: () => true,
      sendMessages: (texts) => (sent.push(...texts), true),
      bufferedAmount: 0,
      metaStamp: {
        takeEntry: () => `"k":"${next++}"`,
        stamp: (text) => `${text.slice(0, -1)},"_meta":{"k":"${next++}"}}`,
      },
    };
    (out as unknown as { [MESSAGE_PORT]: MessagePort })[MESSAGE_PORT] = port;
    return { out, sent, next: () => next };
  }

  it('has the port stamp a message written without an entry taken, and not one written after taking it', async () => {
    const { out, sent } = stampingOutput();
    const writer = new LineWriter(out, { backpressure: () => {} });
    expect(writer.metaStamp).to.not.equal(undefined);
    writer.write('{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}');
    const entry = writer.metaStamp!.takeEntry();
    expect(entry).to.equal('"k":"2"');
    writer.write(`{"jsonrpc":"2.0","id":2,"result":{"_meta":{${entry}}}}`);
    writer.write('{"jsonrpc":"2.0","method":"m"}');
    writer.flush();
    expect(sent).to.deep.equal([
      '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"},"_meta":{"k":"1"}}',
      '{"jsonrpc":"2.0","id":2,"result":{"_meta":{"k":"2"}}}',
      '{"jsonrpc":"2.0","method":"m","_meta":{"k":"3"}}',
    ]);
    out.destroy();
  });

  it('takes no entry once ended, and none from a port that wants none', () => {
    const { out, next } = stampingOutput();
    const writer = new LineWriter(out, { backpressure: () => {} });
    void writer.end(false);
    expect(writer.metaStamp!.takeEntry()).to.equal(undefined);
    expect(next()).to.equal(1);
    const plain = new LineWriter(new PassThrough(), { backpressure: () => {} });
    expect(plain.metaStamp).to.equal(undefined);
    out.destroy();
  });
});
