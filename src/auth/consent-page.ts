/**
 * The pages of the authorization endpoint: plain HTML with no script, every value escaped.
 * First a sign-in page that says nothing about the app (the same for every client id, known or
 * not); after the owner's password checked out, the consent page with the app's name, what it
 * asks for and Allow/Deny. Both forms carry the authorization request back in hidden fields and
 * the POST checks it again from scratch; the consent form adds a single-use ticket
 * (consent-ticket.ts) in place of the password.
 */
import { type AuthorizeRequest, REQUEST_PARAMS } from './authorize.js';
import { canonicalScope, OPENID, PERMISSION_TEXT, type Permission, SCOPE_PREFIX } from './scopes.js';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:28rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;box-sizing:border-box}
.buttons{display:flex;gap:1rem;margin-top:1.2rem}button{flex:1;padding:.6rem;font-size:1rem}
.error{background:#fde8e8;color:#8a1c1c;padding:.6rem;border-radius:4px}.muted{color:#5b6475;font-size:.9rem}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · sitegw</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>
`;
}

function scopeText(scope: string): string {
  if (scope === OPENID) return 'confirm that you are the owner of this site';
  const p = canonicalScope(scope)?.slice(SCOPE_PREFIX.length) as Permission | undefined;
  return p ? PERMISSION_TEXT[p] : scope;
}

export const TICKET_FIELD = 'consent_ticket';
/** the value of the sign-in page's button */
export const SIGN_IN = 'sign-in';

export interface SignInView {
  /** the request as received, re-sent by the form */
  params: ReadonlyMap<string, string>;
  siteName: string;
  /** path the form posts to */
  action: string;
  error?: string;
  username?: string;
}

export interface ConsentView extends SignInView {
  req: AuthorizeRequest;
  ticket: string;
}

function hiddenFields(params: ReadonlyMap<string, string>, extra: [string, string][] = []): string {
  return [...REQUEST_PARAMS.filter((k) => params.has(k)).map((k): [string, string] => [k, params.get(k)!]), ...extra]
    .map(([k, v]) => `<input type="hidden" name="${k}" value="${escapeHtml(v)}">`)
    .join('\n');
}

const errorLine = (error: string | undefined): string =>
  error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';

/** Before the owner's password: nothing here depends on the client the request names. */
export function signInPage(v: SignInView): string {
  return page(
    'Sign in',
    `<h1>Sign in to ${escapeHtml(v.siteName)}</h1>
<p>An app asks for access to this site. Sign in as the site owner to see which app it is and what it asks for.</p>
${errorLine(v.error)}
<form method="post" action="${escapeHtml(v.action)}">
${hiddenFields(v.params)}
<label for="username">Site owner user name</label>
<input id="username" name="username" autocomplete="username" value="${escapeHtml(v.username ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password">
<div class="buttons">
<button type="submit" name="decision" value="${SIGN_IN}">Sign in</button>
</div>
</form>`,
  );
}

/** After the owner's password: the app, what it asks for, and the owner's answer. */
export function consentPage(v: ConsentView): string {
  const returnTo = new URL(v.req.redirectUri);
  const where = returnTo.host || returnTo.protocol;
  return page(
    'Allow access',
    `<h1>Allow <strong>${escapeHtml(v.req.client.name)}</strong> to access ${escapeHtml(v.siteName)}?</h1>
<p>It asks to:</p>
<ul>${v.req.scopes.map((s) => `<li>${escapeHtml(scopeText(s))} <span class="muted">(${escapeHtml(s)})</span></li>`).join('')}</ul>
<p class="muted">After you answer you return to ${escapeHtml(where)}.</p>
${errorLine(v.error)}
<form method="post" action="${escapeHtml(v.action)}">
${hiddenFields(v.params, [[TICKET_FIELD, v.ticket]])}
<div class="buttons">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
  );
}

export function errorPage(title: string, message: string): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1><p class="error">${escapeHtml(message)}</p><p class="muted">Go back to the app you came from and try again, or ask your installer.</p>`,
  );
}
