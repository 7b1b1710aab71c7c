import { Mulberry32 } from '@syncline/core';

/** Google's base32hex alphabet: the only characters allowed in client-chosen Calendar event ids. */
export const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';
const HEX = '0123456789abcdef';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DIGITS = '0123456789';

/** Google's ids and tokens, drawn from the emulator's seeded generator. */
export class SeededRandom extends Mulberry32 {
  constructor(seed: number) {
    super(seed ^ 0x5eed600d);
  }

  /** An integer in [min, max]. */
  between(min: number, max: number): number {
    return this.int(min, max);
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
