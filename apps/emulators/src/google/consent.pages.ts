/** What the emulator's consent screen calls its one OAuth client. */
export const EMULATED_CLIENT_NAME = 'Syncline';

/** Where the account chooser of a sign-in sends the browser, and where its consent form posts. */
export const CONSENT_PATH = '/signin/oauth/consent';

/** What each scope of a sign-in lets the client do, as the consent screen words it. */
const SCOPE_WORDING: Record<string, string | undefined> = {
  openid: undefined,
  email: 'see your email address',
  profile: 'see your basic profile',
};

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} - Google Accounts (emulator)</title></head><body><main>
${body}
</main></body></html>`;

const hiddenFields = (params: URLSearchParams, except: readonly string[]) =>
  [...params.entries()]
    .filter(([k]) => !except.includes(k))
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');

/**
 * Pick a known user or type any address. `action` is where the choice goes, as `login_hint`
 * with every other parameter of the authorize request: back to the authorize endpoint (a data
 * connect, which then redirects with the code) or on to the consent page (a sign-in).
 */
export function accountChooserPage(action: string, params: URLSearchParams, emails: string[]): string {
  const link = (email: string) => {
    const choice = new URLSearchParams(params);
    choice.set('login_hint', email);
    return `<li><a href="${escapeHtml(`${action}?${choice}`)}">${escapeHtml(email)}</a></li>`;
  };
  return page(
    'Sign in',
    `<h1>Choose an account</h1><ul>${emails.map(link).join('')}</ul>
<form method="get" action="${escapeHtml(action)}">${hiddenFields(params, ['login_hint'])}<label for="login_hint">Use another account</label> <input id="login_hint" name="login_hint" type="email" autocomplete="email" placeholder="someone@example.com" required> <button type="submit">Continue</button></form>`,
  );
}

/** "<client> wants to: …" with Allow and Deny, posting every authorize parameter back. */
export function consentPage(email: string, params: URLSearchParams): string {
  const scopes = (params.get('scope') ?? '').split(' ').filter((s) => s !== '');
  const asks = scopes
    .map((s) => (s in SCOPE_WORDING ? SCOPE_WORDING[s] : s))
    .filter((wording): wording is string => wording !== undefined);
  const client = escapeHtml(EMULATED_CLIENT_NAME);
  return page(
    `Sign in to ${EMULATED_CLIENT_NAME}`,
    `<h1>Sign in to ${client}</h1>
<p>Signed in as <strong>${escapeHtml(email)}</strong></p>
<h2 id="asks">${client} wants to:</h2>
<ul aria-labelledby="asks">${asks.map((a) => `<li>${escapeHtml(a)}</li>`).join('')}</ul>
<form method="post" action="${CONSENT_PATH}">${hiddenFields(params, ['decision'])}<button type="submit" name="decision" value="deny">Deny</button> <button type="submit" name="decision" value="allow">Allow</button></form>`,
  );
}
