/**
 * Who gets the bus next (src/modbus/bus-lanes.ts): the gateway's own requests first, guests in
 * turn one request each, a guest's queue bounded, and the next read of a poll ahead of any guest.
 */
import { describe, expect, it } from 'vitest';
import { BusLanes, GuestQueueFull } from '../../src/modbus/bus-lanes.js';

/** a job that records its name and finishes when `release` is called */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

describe('bus lanes', () => {
  it('serves own requests before any guest, and guests in turn', async () => {
    const lanes = new BusLanes();
    const order: string[] = [];
    const first = gate();
    const a = lanes.lane(4);
    const b = lanes.lane(4);
    const all = [
      lanes.ownTurn(async () => {
        order.push('own1');
        await first.p;
      }),
      lanes.guestTurn(a, async () => void order.push('a1')),
      lanes.guestTurn(a, async () => void order.push('a2')),
      lanes.guestTurn(a, async () => void order.push('a3')),
      lanes.guestTurn(b, async () => void order.push('b1')),
      lanes.ownTurn(async () => void order.push('own2')),
    ];
    first.open();
    await Promise.all(all);
    expect(order).toEqual(['own1', 'own2', 'a1', 'b1', 'a2', 'a3']);
  });

  it("a poll's next read, queued by its continuation, goes before a waiting guest", async () => {
    const lanes = new BusLanes();
    const order: string[] = [];
    const g = lanes.lane(4);
    const poll = (async () => {
      for (let i = 0; i < 3; i++) {
        await lanes.ownTurn(async () => void order.push(`poll${i}`));
        // a driver decodes and reaches its next read through a chain of awaits
        for (let k = 0; k < 20; k++) await Promise.resolve();
      }
    })();
    const guest = lanes.guestTurn(g, async () => void order.push('guest'));
    await Promise.all([poll, guest]);
    expect(order).toEqual(['poll0', 'poll1', 'poll2', 'guest']);
  });

  it("a guest's queue is bounded; a closed lane fails what it still had queued", async () => {
    const lanes = new BusLanes();
    const hold = gate();
    const busy = lanes.ownTurn(() => hold.p);
    const g = lanes.lane(2);
    const queued = [lanes.guestTurn(g, async () => 1), lanes.guestTurn(g, async () => 2)];
    await expect(lanes.guestTurn(g, async () => 3)).rejects.toBeInstanceOf(GuestQueueFull);
    g.close();
    hold.open();
    await busy;
    for (const q of queued) await expect(q).rejects.toThrow(/the guest left/);
    await lanes.idle();
  });
});
