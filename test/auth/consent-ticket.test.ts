/** The consent page's ticket: proof of a sign-in for one request, once, for a short while. */
import { describe, expect, it } from 'vitest';
import { ConsentTickets } from '../../src/auth/consent-ticket.js';

const request = (state: string) =>
  new Map([
    ['client_id', 'app'],
    ['response_type', 'code'],
    ['state', state],
  ]);

describe('consent tickets', () => {
  it('are taken once, for the request they were issued for, before they expire', () => {
    const clock = { now: 0 };
    const t = new ConsentTickets(() => clock.now);
    const a = t.issue(request('s1'));
    expect(t.take(a, new Map([...request('s1')].reverse()))).toBe(true);
    expect(t.take(a, request('s1'))).toBe(false);

    const b = t.issue(request('s1'));
    expect(t.take(b, request('s2'))).toBe(false);
    // a failed take spends it too: it cannot be tried against other requests
    expect(t.take(b, request('s1'))).toBe(false);

    const c = t.issue(request('s1'));
    clock.now = 10 * 60_000;
    expect(t.take(c, request('s1'))).toBe(false);
    expect(t.take('sgw_ct_made-up', request('s1'))).toBe(false);
  });
});
