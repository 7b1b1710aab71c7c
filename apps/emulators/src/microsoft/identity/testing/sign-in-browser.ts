import { readForm } from '../../../google/testing/consent-browser';

/** Where the sign-in sent the browser back to, and what it carried. */
export interface SignInAnswer {
  /** The redirect URI, without the answer. */
  redirectUri: string;
  /** code and state, or error, error_description and state. */
  params: URLSearchParams;
  /** How the answer came: a redirect (query or fragment) or a self-submitting form (form_post). */
  via: 'query' | 'fragment' | 'form_post';
}

/**
 * A browser at the Microsoft emulator's sign-in pages, driven by hand: it loads the authorize
 * URL, picks the account when asked, and presses Accept or Cancel on the consent page.
 */
export async function signInAtMicrosoft(
  authorizeUrl: string | URL,
  choice: { upn?: string; decision: 'accept' | 'cancel' },
): Promise<SignInAnswer> {
  let page = await load(new URL(authorizeUrl), 'the authorize URL');
  if (page.html.includes('Pick an account')) {
    if (!choice.upn) throw new Error('the account picker asks for an account, and none was given');
    const picker = readForm(page.html, page.url);
    picker.fields.set('login_hint', choice.upn);
    page = await load(new URL(`${picker.action.href.split('?')[0]}?${picker.fields}`), 'the chosen account');
  }
  if (!page.html.includes('Permissions requested')) throw new Error(`not the consent page: ${page.html}`);
  const consent = readForm(page.html, page.url);
  consent.fields.set('decision', choice.decision);
  const res = await fetch(consent.action, {
    method: consent.method,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: consent.fields.toString(),
    redirect: 'manual',
  });
  return followAnswer(res, page.url);
}

/** The answer of the last step: a 302 to the redirect URI, or form_post's self-submitting form. */
export async function followAnswer(res: Response, base: URL): Promise<SignInAnswer> {
  const location = res.headers.get('location');
  if (res.status === 302 && location) {
    const target = new URL(location);
    const fragment = target.hash.length > 1;
    const params = fragment ? new URLSearchParams(target.hash.slice(1)) : new URLSearchParams(target.search);
    target.hash = '';
    target.search = '';
    return { redirectUri: target.toString(), params, via: fragment ? 'fragment' : 'query' };
  }
  const html = await res.text();
  if (res.status === 200 && html.includes('document.forms[0].submit()')) {
    const form = readForm(html, base);
    return { redirectUri: form.action.toString(), params: form.fields, via: 'form_post' };
  }
  throw new Error(`expected the way back to the app, got ${res.status}: ${html}`);
}

async function load(url: URL, what: string): Promise<{ url: URL; html: string }> {
  const res = await fetch(url, { redirect: 'manual' });
  const html = await res.text();
  if (res.status !== 200) throw new Error(`${what} answered ${res.status}, not a page: ${html}`);
  return { url, html };
}
