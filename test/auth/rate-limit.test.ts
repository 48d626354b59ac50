/** The failure limits and the hashing gate as plain logic: reservations, keys, fairness. */
import { describe, expect, it } from 'vitest';
import { GateBusy, HashGate } from '../../src/auth/hash-gate.js';
import { type Attempt, FailureLimiter, IDENTITY_SPREAD, Refused, type Subject } from '../../src/auth/rate-limit.js';

const WINDOW = 60_000;

function limiter(maxFailures: number, clock = { now: 0 }, maxKeys?: number): FailureLimiter {
  return new FailureLimiter({ maxFailures, windowMs: WINDOW, now: () => clock.now, maxKeys });
}

function reserved(r: Attempt | Refused): Attempt {
  if (r instanceof Refused) throw new Error(`refused for ${r.retryAfter} s`);
  return r;
}

const owner = (address: string): Subject => ({ identity: 'owner', address });

describe('failure limiter', () => {
  it('counts reservations still being checked, so parallel attempts beyond the limit are refused before any check', () => {
    const l = limiter(3);
    const inFlight = [1, 2, 3].map(() => reserved(l.reserve(owner('a'))));
    const fourth = l.reserve(owner('a'));
    expect(fourth).toBeInstanceOf(Refused);
    expect((fourth as Refused).retryAfter).toBe(1);
    for (const a of inFlight) a.fail();
    const after = l.reserve(owner('a')) as Refused;
    expect(after).toBeInstanceOf(Refused);
    expect(after.reason).toBe('failures');
    expect(after.retryAfter).toBe(WINDOW / 1000);
  });

  it('a reservation that succeeds or is released does not count; settling twice changes nothing', () => {
    const l = limiter(2);
    const a = reserved(l.reserve(owner('a')));
    const b = reserved(l.reserve(owner('a')));
    a.succeed();
    b.release();
    b.fail();
    a.fail();
    for (let i = 0; i < 5; i++) reserved(l.reserve(owner('a'))).succeed();
    const x = reserved(l.reserve(owner('a')));
    x.fail();
    reserved(l.reserve(owner('a'))).fail();
    expect(l.reserve(owner('a'))).toBeInstanceOf(Refused);
  });

  it('failures leave the window: the oldest one frees the key', () => {
    const clock = { now: 0 };
    const l = limiter(2, clock);
    reserved(l.reserve(owner('a'))).fail();
    clock.now = 10_000;
    reserved(l.reserve(owner('a'))).fail();
    clock.now = 20_000;
    expect((l.reserve(owner('a')) as Refused).retryAfter).toBe(40);
    clock.now = 60_001;
    reserved(l.reserve(owner('a'))).release();
  });

  it('one address cannot lock the identity out for another address', () => {
    const l = limiter(3);
    for (let i = 0; i < 3; i++) reserved(l.reserve(owner('attacker'))).fail();
    expect(l.reserve(owner('attacker'))).toBeInstanceOf(Refused);
    expect(l.reserve({ identity: 'client:x', address: 'attacker' })).toBeInstanceOf(Refused);
    reserved(l.reserve(owner('home'))).succeed();
    reserved(l.reserve(owner('new-laptop'))).succeed();
  });

  it('failures spread over many addresses block the identity for new addresses, not for one where it succeeded', () => {
    const l = limiter(2);
    reserved(l.reserve(owner('home'))).succeed();
    for (let n = 0; n < IDENTITY_SPREAD; n++)
      for (let i = 0; i < 2; i++) reserved(l.reserve(owner(`attacker-${n}`))).fail();
    const fresh = l.reserve(owner('new-laptop'));
    expect(fresh).toBeInstanceOf(Refused);
    reserved(l.reserve(owner('home'))).succeed();
    // another identity from a fresh address is not affected
    reserved(l.reserve({ identity: 'client:x', address: 'new-laptop' })).release();
  });

  it('forgets the least recently used keys beyond maxKeys, but not those with attempts in flight', () => {
    const l = limiter(1, { now: 0 }, 4);
    const held = reserved(l.reserve({ identity: 'i0', address: 'a0' }));
    for (let n = 1; n <= 6; n++) reserved(l.reserve({ identity: `i${n}`, address: `a${n}` })).fail();
    // the newest failed keys are kept, the oldest forgotten
    expect(l.reserve({ identity: 'i9', address: 'a6' })).toBeInstanceOf(Refused);
    reserved(l.reserve({ identity: 'i9', address: 'a1' })).release();
    // a0's reservation survived the sweeps: it still refuses a second parallel attempt
    expect(l.reserve({ identity: 'i9', address: 'a0' })).toBeInstanceOf(Refused);
    held.fail();
  });
});

/** A piece of work the test finishes by hand, recording when it started. */
function job(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  return { run: () => (log.push(name), done), finish };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('hashing gate', () => {
  it('runs at most `concurrency` checks and refuses an address beyond perAddress, and the queue beyond maxWaiting', async () => {
    const gate = new HashGate({ concurrency: 1, perAddress: 2, maxWaiting: 2 });
    const log: string[] = [];
    const jobs = [job(log, 'a1'), job(log, 'a2'), job(log, 'b1')];
    const runs = [gate.run('a', jobs[0]!.run), gate.run('a', jobs[1]!.run), gate.run('b', jobs[2]!.run)];
    await expect(gate.run('a', job(log, 'a3').run)).rejects.toBeInstanceOf(GateBusy);
    await expect(gate.run('c', job(log, 'c1').run)).rejects.toBeInstanceOf(GateBusy);
    expect(gate.waiting).toBe(2);
    expect(log).toEqual(['a1']);
    for (const j of jobs) j.finish();
    await Promise.all(runs);
    expect(gate.waiting).toBe(0);
    expect(gate.started).toBe(3);
  });

  it('serves the waiting address with the fewest checks running first, so a flood does not queue ahead of a single request', async () => {
    const gate = new HashGate({ concurrency: 2, perAddress: 4, maxWaiting: 32 });
    const log: string[] = [];
    const flood = ['a', 'b'].flatMap((addr) => [1, 2, 3, 4].map((n) => ({ addr, j: job(log, `${addr}${n}`) })));
    const runs = flood.map(({ addr, j }) => gate.run(addr, j.run));
    const single = job(log, 'c1');
    const singleRun = gate.run('c', single.run);
    expect(log).toEqual(['a1', 'a2']);
    // a slot frees: of b and c (nothing running) b waited longer; a (one running) waits
    flood[0]!.j.finish();
    await settle();
    expect(log).toEqual(['a1', 'a2', 'b1']);
    // the next slot goes to c, ahead of the six flood checks still waiting
    flood[1]!.j.finish();
    await settle();
    expect(log).toEqual(['a1', 'a2', 'b1', 'c1']);
    single.finish();
    await singleRun;
    for (const { j } of flood) j.finish();
    await Promise.all(runs);
    expect(gate.started).toBe(9);
  });

  it('a check that throws frees its slot', async () => {
    const gate = new HashGate({ concurrency: 1, perAddress: 1, maxWaiting: 1 });
    await expect(gate.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(gate.run('a', () => Promise.resolve(7))).resolves.toBe(7);
  });
});
