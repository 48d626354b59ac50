/**
 * The consent page's proof that the owner signed in a moment ago. The authorization endpoint
 * shows which app asks, and for what, only after the owner's password checked out (so a visitor
 * cannot learn which client ids exist); the Allow/Deny form of that second page carries a ticket
 * instead of asking for the password again. A ticket is 256 random bits, single-use, bound to the
 * exact authorization request it was issued for, and short-lived; only its SHA-256 is kept.
 */
import { randomSecret, sha256 } from './secrets.js';

const TICKET_PREFIX = 'sgw_ct_';
/** long enough to read the page, short enough that a forgotten tab is useless */
const TICKET_MS = 10 * 60_000;
/** an owner has a page or two open; the oldest ticket goes first */
const MAX_TICKETS = 32;

export class ConsentTickets {
  private readonly tickets = new Map<string, { request: string; expiresAt: number }>();

  constructor(private readonly now: () => number) {}

  /** A ticket for this request (its parameters as the form carries them). */
  issue(request: ReadonlyMap<string, string>): string {
    const ticket = randomSecret(TICKET_PREFIX);
    this.tickets.set(sha256(ticket), { request: requestDigest(request), expiresAt: this.now() + TICKET_MS });
    while (this.tickets.size > MAX_TICKETS) this.tickets.delete(this.tickets.keys().next().value!);
    return ticket;
  }

  /** Whether the ticket was issued for this very request and is still fresh; it is spent either way. */
  take(ticket: string, request: ReadonlyMap<string, string>): boolean {
    if (ticket.length > 100) return false;
    const key = sha256(ticket);
    const t = this.tickets.get(key);
    this.tickets.delete(key);
    return t !== undefined && t.expiresAt > this.now() && t.request === requestDigest(request);
  }
}

function requestDigest(request: ReadonlyMap<string, string>): string {
  return sha256(JSON.stringify([...request].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}
