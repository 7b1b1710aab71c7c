import { Mulberry32 } from '@syncline/core';

/** HubSpot's ids, tokens and orderings, drawn from the emulator's seeded generator. */
export class Prng extends Mulberry32 {
  /** A stream derived from a seed and labels, so portals do not disturb each other's sequences. */
  static derive(seed: number, ...labels: (string | number)[]): Prng {
    let h = (seed ^ 0x9e3779b9) >>> 0;
    for (const label of labels) {
      for (const ch of String(label)) {
        h = Math.imul(h ^ ch.charCodeAt(0), 0x85ebca6b) >>> 0;
        h = (h ^ (h >>> 13)) >>> 0;
      }
      h = Math.imul(h ^ 0x2f, 0xc2b2ae35) >>> 0;
    }
    return new Prng(h);
  }

  hex(length: number): string {
    let out = '';
    while (out.length < length) out += Math.floor(this.next() * 16).toString(16);
    return out;
  }

  /** A version-4-shaped UUID, as HubSpot's correlation ids and refresh tokens look. */
  uuid(): string {
    const h = this.hex(32);
    const variant = ((Number.parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  /** A Fisher-Yates shuffle into a new array. */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const a = out[i] as T;
      out[i] = out[j] as T;
      out[j] = a;
    }
    return out;
  }
}
