import type { MicrosoftUser } from '../user.store';
import type { Aadsts, RefusalIds } from './identity-errors';
import { describeScope } from './scopes';

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

const page = (title: string, body: string, extra = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} (Microsoft emulator)</title></head><body><main>
${body}
</main>${extra}</body></html>`;

const hiddenFields = (params: URLSearchParams) =>
  [...params.entries()]
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');

/**
 * "Pick an account": a link per user of the emulator, or any sign-in name typed in. Either
 * goes back to the authorize endpoint (`action`) as `login_hint`, with every other parameter.
 */
export function accountPickerPage(
  action: string,
  params: URLSearchParams,
  users: readonly MicrosoftUser[],
  notice?: string,
): string {
  const link = (user: MicrosoftUser) => {
    const choice = new URLSearchParams(params);
    choice.set('login_hint', user.userPrincipalName);
    return `<li><a href="${escapeHtml(`${action}?${choice}`)}">${escapeHtml(user.displayName)} (${escapeHtml(user.userPrincipalName)})</a></li>`;
  };
  return page(
    'Sign in to your account',
    `<h1>Pick an account</h1>${notice ? `<p role="alert">${escapeHtml(notice)}</p>` : ''}
<ul>${users.map(link).join('')}</ul>
<form method="get" action="${escapeHtml(action)}">${hiddenFields(params)}<label for="login_hint">Use another account</label> <input id="login_hint" name="login_hint" type="email" autocomplete="username" placeholder="someone@example.com" required> <button type="submit">Next</button></form>`,
  );
}

/** "Permissions requested": what the app asks for, with Accept and Cancel posting every parameter back. */
export function consentPage(
  action: string,
  params: URLSearchParams,
  user: MicrosoftUser,
  appName: string,
  scopes: readonly string[],
): string {
  const asks = [...new Set(scopes.map(describeScope))];
  const app = escapeHtml(appName);
  return page(
    'Permissions requested',
    `<h1>Permissions requested</h1>
<p>${escapeHtml(user.userPrincipalName)}</p>
<h2 id="asks">${app} would like to:</h2>
<ul aria-labelledby="asks">${asks.map((a) => `<li>${escapeHtml(a)}</li>`).join('')}</ul>
<p>Accepting these permissions means that you allow this app to use your data as specified in their terms of service and privacy statement.</p>
<form method="post" action="${escapeHtml(action)}">${hiddenFields(params)}<button type="submit" name="decision" value="cancel">Cancel</button> <button type="submit" name="decision" value="accept">Accept</button></form>`,
  );
}

/** What the sign-in pages show instead of going back to an app they cannot trust or serve. */
export function errorPage(refused: Aadsts, ids: RefusalIds): string {
  return page(
    'Sign in to your account',
    `<h1>Sorry, but we're having trouble signing you in.</h1>
<p id="error">AADSTS${refused.code}: ${escapeHtml(refused.message)}</p>
<dl><dt>Request Id</dt><dd>${ids.traceId}</dd><dt>Correlation Id</dt><dd>${ids.correlationId}</dd><dt>Timestamp</dt><dd>${ids.timestamp}</dd></dl>`,
  );
}

/** `response_mode=form_post`: the answer posted to the redirect URI by a form that submits itself. */
export function formPostPage(redirectUri: string, answer: URLSearchParams): string {
  return page(
    'Working...',
    `<form method="post" action="${escapeHtml(redirectUri)}">${hiddenFields(answer)}<noscript><button type="submit">Continue</button></noscript></form>`,
    '<script>document.forms[0].submit()</script>',
  );
}
