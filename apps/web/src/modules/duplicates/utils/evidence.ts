import { evidenceWords } from '../../records/utils/format';

/** One item of a pair's evidence in words: `email:ana@acme.com`, or an object the identity stage recorded. */
export function evidenceText(item: unknown): string {
  if (typeof item === 'string') return evidenceWords(item);
  if (typeof item === 'object' && item !== null) {
    const { kind, key, value, type } = item as Record<string, unknown>;
    const label = [kind ?? type ?? key, value].filter((part) => typeof part === 'string').join(' ');
    if (label !== '') return label;
  }
  return JSON.stringify(item);
}
