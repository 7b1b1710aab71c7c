/**
 * A browser at the Google emulator's sign-in pages, driven by hand: it loads the authorize
 * URL, picks the account on the chooser, and submits the consent form with Allow or Deny.
 * Answers where the browser is finally redirected to (the client's redirect URI).
 */
export async function signInAtGoogle(
  authorizeUrl: string | URL,
  choice: { email: string; decision: 'allow' | 'deny' },
): Promise<URL> {
  let page = await load(new URL(authorizeUrl), 'the authorize URL');
  if (page.html.includes('Choose an account')) {
    const chooser = readForm(page.html, page.url);
    chooser.fields.set('login_hint', choice.email);
    page = await load(
      new URL(`${chooser.action.href.split('?')[0]}?${chooser.fields}`),
      'the chosen account',
    );
  }
  const consent = readForm(page.html, page.url);
  consent.fields.set('decision', choice.decision);
  const res = await fetch(consent.action, {
    method: consent.method,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: consent.fields.toString(),
    redirect: 'manual',
  });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) {
    throw new Error(`the consent form answered ${res.status}, not a redirect: ${await res.text()}`);
  }
  return new URL(location);
}

async function load(url: URL, what: string): Promise<{ url: URL; html: string }> {
  const res = await fetch(url, { redirect: 'manual' });
  const html = await res.text();
  if (res.status !== 200) throw new Error(`${what} answered ${res.status}, not a page: ${html}`);
  return { url, html };
}

interface PageForm {
  method: 'GET' | 'POST';
  action: URL;
  /** Every named input's value: the hidden fields a browser would send back. */
  fields: URLSearchParams;
}

/** The first form of a page, as a browser would submit it (named inputs with a value). */
export function readForm(html: string, base: URL): PageForm {
  const form = html.match(/<form\b([^>]*)>([\s\S]*?)<\/form>/i);
  if (!form) throw new Error(`no form on the page: ${html}`);
  const attributes = attributesOf(form[1] ?? '');
  const fields = new URLSearchParams();
  for (const input of (form[2] ?? '').matchAll(/<input\b([^>]*)>/gi)) {
    const { name, value } = attributesOf(input[1] ?? '');
    if (name !== undefined && value !== undefined) fields.append(name, value);
  }
  return {
    method: attributes.method?.toUpperCase() === 'POST' ? 'POST' : 'GET',
    action: new URL(attributes.action ?? base.pathname, base),
    fields,
  };
}

function attributesOf(tag: string): Record<string, string | undefined> {
  const attributes: Record<string, string> = {};
  for (const [, name, value] of tag.matchAll(/([\w-]+)="([^"]*)"/g)) {
    if (name !== undefined && value !== undefined) attributes[name.toLowerCase()] = unescapeHtml(value);
  }
  return attributes;
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
