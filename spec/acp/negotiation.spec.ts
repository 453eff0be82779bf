import { RequestError } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import {
  ACP_PROTOCOL_VERSION,
  ACP_PROTOCOL_VERSIONS,
  RpcError,
  UnsupportedProtocolVersionError,
  acceptProtocolVersion,
  createConnectionPair,
  isProtocolVersion,
  negotiatedVersion,
  selectProtocolVersion,
  unsupportedProtocolVersion,
} from '../../lib';

describe('protocol version negotiation', () => {
  it('speaks versions 1 and 2 and offers 2', () => {
    expect({ versions: ACP_PROTOCOL_VERSIONS, offer: ACP_PROTOCOL_VERSION }).to.deep.equal({ versions: [1, 2], offer: 2 });
  });

  describe("selectProtocolVersion() (the agent's side)", () => {
    it('answers the requested version when supported, else the highest supported below it', () => {
      expect([1, 2, 3, 65535].map((requested) => selectProtocolVersion(requested))).to.deep.equal([1, 2, 2, 2]);
      expect(selectProtocolVersion(5, [4, 1, 3])).to.equal(4);
    });

    it('refuses with -32022 {requested, supported} when nothing supported is at or below the request', () => {
      const error = (() => {
        try {
          return selectProtocolVersion(1, [3, 2]);
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).to.be.instanceOf(RpcError);
      expect((error as RpcError).toJSON()).to.deep.equal({
        code: -32022,
        message: 'Unsupported protocol version',
        data: { requested: 1, supported: [2, 3] },
      });
    });

    it('refuses a version that is not an integer from 0 to 65535 with -32602', () => {
      for (const requested of [undefined, null, '2', 1.5, -1, 65536, Number.NaN]) {
        expect(() => selectProtocolVersion(requested), String(requested))
          .to.throw(RpcError)
          .with.property('code', -32602);
      }
      expect(isProtocolVersion(0)).to.equal(true);
    });
  });

  it('unsupportedProtocolVersion() is the error the official SDK builds', () => {
    const sdk = RequestError.unsupportedProtocolVersion(1, [2]);
    expect(unsupportedProtocolVersion(1, [2]).toJSON()).to.deep.equal({ code: sdk.code, message: sdk.message, data: sdk.data });
  });

  describe("acceptProtocolVersion() (the client's side)", () => {
    it('accepts an answer at or below the offer that the client speaks', () => {
      expect(acceptProtocolVersion(1, 2)).to.equal(1);
      expect(acceptProtocolVersion(2, 2)).to.equal(2);
    });

    it('throws UnsupportedProtocolVersionError for an answer above the offer, unknown, or not a version', () => {
      for (const answered of [3, 0, '2', undefined]) {
        expect(() => acceptProtocolVersion(answered, 2), String(answered)).to.throw(
          UnsupportedProtocolVersionError,
          'offered 2, supported 1, 2',
        );
      }
      expect(() => acceptProtocolVersion(1, 2, [2])).to.throw(UnsupportedProtocolVersionError);
    });
  });

  it('negotiatedVersion() is undefined on a connection no helper initialized', async () => {
    const [a, b] = createConnectionPair();
    expect(negotiatedVersion(a)).to.equal(undefined);
    await Promise.all([a.close(), b.close()]);
  });
});
