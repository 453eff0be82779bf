/**
 * The queue behind a replay buffer and a reconnecting WebSocket client's unacknowledged messages.
 */
import { expect } from 'chai';
import { Ring } from '../../lib/transports/remote/resume/ring';
import { seededRandom } from '../helpers/random';

describe('Ring', () => {
  it('gives back what was pushed, front first, after any pushes and drops (seeded, against an array)', () => {
    const random = seededRandom(11);
    const ring = new Ring('');
    let model: string[] = [];
    let n = 0;
    for (let step = 0; step < 20_000; step++) {
      // Growing phases (the ring doubles while wrapped around) alternate with shrinking ones.
      const pushes = Math.floor(step / 2_000) % 2 === 0 ? 0.7 : 0.3;
      if (random() < pushes) {
        const text = `m${n++}`;
        ring.push(text);
        model.push(text);
      } else {
        const count = Math.floor(random() * 4);
        ring.dropFront(count);
        model = model.slice(count);
      }
      expect(ring.length, `step ${step}`).to.equal(model.length);
      if (step % 97 === 0) expect(ring.toArray(), `step ${step}`).to.deep.equal(model);
    }
    expect(ring.toArray()).to.deep.equal(model);
  });

  it('drops everything when asked for more than it holds', () => {
    const ring = new Ring('');
    for (const text of ['a', 'b', 'c']) ring.push(text);
    ring.dropFront(5);
    expect(ring.length).to.equal(0);
    expect(ring.toArray()).to.deep.equal([]);
    ring.push('d');
    expect(ring.toArray()).to.deep.equal(['d']);
  });
});
