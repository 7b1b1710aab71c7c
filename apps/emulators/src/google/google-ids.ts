/** Google's base32hex alphabet: the only characters allowed in client-chosen Calendar event ids. */
export const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';
const HEX = '0123456789abcdef';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DIGITS = '0123456789';

/**
 * mulberry32: a tiny seeded generator, so every id, token and gap the emulator invents is the
 * same for the same seed and the same sequence of calls (reproducible test failures).
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = (seed ^ 0x5eed600d) >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  string(alphabet: string, length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }

  base32hex(length: number): string {
    return this.string(BASE32HEX, length);
  }

  hex(length: number): string {
    return this.string(HEX, length);
  }

  base64url(length: number): string {
    return this.string(BASE64URL, length);
  }

  digits(length: number): string {
    return this.string(DIGITS.slice(1), 1) + this.string(DIGITS, length - 1);
  }
}

/** Calendar accepts client-chosen ids of 5–1024 base32hex characters. */
export const isValidEventId = (id: string): boolean => /^[0-9a-v]{5,1024}$/.test(id);

/** RFC 3339 with millisecond precision, as Google writes `created` and `updated`. */
export const isoMs = (ms: number): string => new Date(ms).toISOString();
