/** Thrown by ByteReader on bytes that do not parse; the state codec turns it into CorruptState. */
export class ByteCodecError extends Error {}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A growing buffer of varints (LEB128, exact up to 2^53), float64s and strings. */
export class ByteWriter {
  private buf = new Uint8Array(1024);
  private len = 0;
  private readonly view8 = new DataView(new ArrayBuffer(8));

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + extra));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  byte(value: number): void {
    this.ensure(1);
    this.buf[this.len++] = value;
  }

  uint(value: number): void {
    this.ensure(8);
    let n = value;
    while (n >= 128) {
      this.buf[this.len++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buf[this.len++] = n;
  }

  /** Zig-zag: small negative numbers stay small. */
  int(value: number): void {
    this.uint(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  f64(value: number): void {
    this.view8.setFloat64(0, value);
    this.raw(new Uint8Array(this.view8.buffer));
  }

  u32(value: number): void {
    this.view8.setUint32(0, value);
    this.raw(new Uint8Array(this.view8.buffer, 0, 4));
  }

  str(value: string): void {
    const bytes = encoder.encode(value);
    this.uint(bytes.length);
    this.raw(bytes);
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

export class ByteReader {
  private pos = 0;
  private readonly view: DataView;

  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  get done(): boolean {
    return this.pos === this.buf.length;
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new ByteCodecError(`truncated at byte ${this.pos}`);
  }

  byte(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  uint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      value += (b & 127) * scale;
      if (b < 128) break;
      scale *= 128;
      if (scale > 2 ** 56) throw new ByteCodecError(`varint too long at byte ${this.pos}`);
    }
    return value;
  }

  int(): number {
    const z = this.uint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  f64(): number {
    this.need(8);
    const value = this.view.getFloat64(this.pos);
    this.pos += 8;
    return value;
  }

  u32(): number {
    this.need(4);
    const value = this.view.getUint32(this.pos);
    this.pos += 4;
    return value;
  }

  str(): string {
    const n = this.uint();
    return decoder.decode(this.raw(n));
  }

  raw(n: number): Uint8Array {
    this.need(n);
    const bytes = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return bytes;
  }
}
