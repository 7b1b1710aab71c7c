/**
 * Bodies as Exchange returns them: HTML unless `Prefer: outlook.body-content-type="text"`,
 * a text body wrapped into an HTML document and an HTML body into a whole one, so a client
 * that compares bodies byte for byte after a round trip finds them changed, as it would
 * against Outlook.
 */
export type BodyType = 'text' | 'html';

const HTML_HEAD =
  '<html>\r\n<head>\r\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\r\n</head>\r\n<body>\r\n';
const HTML_TAIL = '\r\n</body>\r\n</html>\r\n';

export function renderBody(
  body: { contentType: BodyType; content: string },
  wanted: BodyType,
): { contentType: BodyType; content: string } {
  if (body.content === '') return { contentType: wanted, content: '' };
  if (wanted === 'text')
    return {
      contentType: 'text',
      content: body.contentType === 'text' ? body.content : htmlToText(body.content),
    };
  if (body.contentType === 'html')
    return {
      contentType: 'html',
      content: /^\s*<html/i.test(body.content) ? body.content : HTML_HEAD + body.content + HTML_TAIL,
    };
  const escaped = escapeHtml(body.content).replace(/\r?\n/g, '<br>\r\n');
  return { contentType: 'html', content: `${HTML_HEAD}<div class="PlainText">${escaped}</div>${HTML_TAIL}` };
}

/** The first 255 characters of the body's text, whitespace folded. */
export function bodyPreview(body: { contentType: BodyType; content: string }): string {
  const text = body.contentType === 'text' ? body.content : htmlToText(body.content);
  return text.replace(/\s+/g, ' ').trim().slice(0, 255);
}

function htmlToText(html: string): string {
  return html
    .replace(/<head[\s\S]*?<\/head>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div)>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();
}

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
