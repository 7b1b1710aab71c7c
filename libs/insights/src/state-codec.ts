import { err, ok, type Result } from '@syncline/core';
import { ByteReader, ByteWriter } from './byte-codec';
import type { DayCalendar } from './day-calendar';
import type { EngineState } from './engine-state';
import {
  type Entry,
  KIND_OF,
  type KindCode,
  linkReplies,
  NO_THREAD,
  newPerson,
  type PersonState,
} from './person-state';
import {
  CONNECTION_STATUSES,
  type InsightMetrics,
  type InsightsError,
  type InsightsParams,
  type PersonId,
  TRENDS,
  type WindowCounts,
} from './types';
import { WatermarkTracker } from './watermark-tracker';

/**
 * The engine's state as bytes (a `bytea` beside the consumer's offsets). Compact on purpose:
 * people are most of it, so a person is its id (16 bytes when a UUID), a flags byte for the
 * folded-away times, and per entry a time delta varint, one header byte and, for a mail in a
 * thread, 4 bytes of thread hash. Days are not stored: they are recomputed from the zone.
 */
const VERSION = 1;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function encodeState(s: EngineState, params: InsightsParams): Uint8Array {
  const w = new ByteWriter();
  w.byte(VERSION);
  w.str(params.timeZone);
  w.uint(params.allowedLatenessMs);
  w.uint(params.earlyIntervalMs);
  w.uint(params.maxReplyGapMs);
  w.f64(s.tracker.watermark);
  const connections = s.tracker.list();
  w.uint(connections.length);
  for (const c of connections) {
    w.str(c.connectionId);
    w.f64(c.watermark);
    w.byte(CONNECTION_STATUSES.indexOf(c.status));
    w.uint(c.maxLatenessMs);
  }
  w.f64(s.lastFiredDay);
  w.f64(s.lastEarlyAt);
  const { accepted, late, beyondAllowedLateness, invalidInput } = s.counters;
  for (const n of [accepted, late, beyondAllowedLateness, invalidInput]) w.uint(n);
  const position = new Map<PersonState, number>();
  w.uint(s.persons.size);
  for (const p of s.persons.values()) {
    position.set(p, position.size);
    writePerson(w, p);
  }
  const positions = (people: Iterable<PersonState>): number[] =>
    [...people].map((p) => position.get(p)!).sort((a, b) => a - b);
  const touched = positions(s.touched);
  w.uint(touched.length);
  for (const i of touched) w.uint(i);
  const byPosition = new Map([...s.earlyPanes].map(([p, m]) => [position.get(p)!, m]));
  const early = positions(s.earlyPanes.keys());
  w.uint(early.length);
  for (const i of early) {
    w.uint(i);
    writeMetrics(w, byPosition.get(i)!);
  }
  return w.bytes();
}

function writePerson(w: ByteWriter, p: PersonState): void {
  if (UUID.test(p.id)) {
    w.byte(1);
    const hex = p.id.replaceAll('-', '');
    for (let i = 0; i < 32; i += 2) w.byte(Number.parseInt(hex.slice(i, i + 2), 16));
  } else {
    w.byte(0);
    w.str(p.id);
  }
  w.byte((p.floor[0] >= 0 ? 1 : 0) | (p.floor[1] >= 0 ? 2 : 0) | (p.floor[2] >= 0 ? 4 : 0));
  for (const t of p.floor) if (t >= 0) w.uint(t);
  w.uint(p.entries.length);
  let previous = 0;
  for (const e of p.entries) {
    w.uint(e.t - previous);
    previous = e.t;
    const zigzag = e.m >= 0 ? e.m * 2 : -e.m * 2 - 1;
    w.uint(zigzag * 8 + (e.thread === NO_THREAD ? 0 : 4) + e.kind);
    if (e.thread !== NO_THREAD) w.u32(e.thread);
  }
}

const nullable = (w: ByteWriter, value: number | null): void => w.uint(value === null ? 0 : value + 1);

function writeMetrics(w: ByteWriter, m: InsightMetrics): void {
  for (const c of [m.last7, m.last30, m.last90])
    for (const n of [c.mailsIn, c.mailsOut, c.meetings]) w.uint(n);
  nullable(w, m.lastContactedAt);
  w.byte(m.lastContactedVia === null ? 0 : KIND_OF.indexOf(m.lastContactedVia) + 1);
  nullable(w, m.lastInboundAt);
  nullable(w, m.lastOutboundAt);
  w.uint(m.replies90);
  nullable(w, m.medianReplyMs90);
  w.byte(TRENDS.indexOf(m.trend));
}

const corrupt = (message: string): InsightsError => ({ code: 'CorruptState', message });

export function decodeState(
  bytes: Uint8Array,
  params: InsightsParams,
  calendar: DayCalendar,
): Result<EngineState, InsightsError> {
  try {
    return readState(new ByteReader(bytes), params, calendar);
  } catch (error) {
    return err(corrupt(`state does not decode: ${(error as Error).message}`));
  }
}

function readState(
  r: ByteReader,
  params: InsightsParams,
  calendar: DayCalendar,
): Result<EngineState, InsightsError> {
  const version = r.byte();
  if (version !== VERSION) return err(corrupt(`unknown state version ${version}`));
  const stored = { timeZone: r.str(), lateness: r.uint(), early: r.uint(), gap: r.uint() };
  const expected = {
    timeZone: params.timeZone,
    lateness: params.allowedLatenessMs,
    early: params.earlyIntervalMs,
    gap: params.maxReplyGapMs,
  };
  if (JSON.stringify(stored) !== JSON.stringify(expected)) {
    return err({
      code: 'StateMismatch',
      message: `state was folded with ${JSON.stringify(stored)}, not ${JSON.stringify(expected)}: rebuild it from the log`,
    });
  }
  const watermark = r.f64();
  const connections = Array.from({ length: r.uint() }, () => {
    const connectionId = r.str();
    const connectionWatermark = r.f64();
    const status = CONNECTION_STATUSES[r.byte()];
    if (!status) throw new Error(`bad status for ${connectionId}`);
    return { connectionId, watermark: connectionWatermark, status, maxLatenessMs: r.uint() };
  });
  const lastFiredDay = r.f64();
  const lastEarlyAt = r.f64();
  const counters = {
    accepted: r.uint(),
    late: r.uint(),
    beyondAllowedLateness: r.uint(),
    invalidInput: r.uint(),
  };
  const people = Array.from({ length: r.uint() }, () => readPerson(r, calendar, params.maxReplyGapMs));
  const at = (i: number): PersonState => {
    const p = people[i];
    if (!p) throw new Error(`no person at ${i}`);
    return p;
  };
  const touched = new Set(Array.from({ length: r.uint() }, () => at(r.uint())));
  const earlyPanes = new Map<PersonState, InsightMetrics>();
  for (let n = r.uint(); n > 0; n--) {
    const p = at(r.uint());
    earlyPanes.set(p, readMetrics(r));
  }
  if (!r.done) return err(corrupt('bytes left after the state'));
  return ok({
    tracker: WatermarkTracker.restore(watermark, connections),
    persons: new Map(people.map((p) => [p.id, p])),
    lastFiredDay,
    lastEarlyAt,
    touched,
    earlyPanes,
    counters,
  });
}

function readPerson(r: ByteReader, calendar: DayCalendar, maxReplyGapMs: number): PersonState {
  let id: string;
  if (r.byte() === 1) {
    const hex = [...r.raw(16)].map((b) => b.toString(16).padStart(2, '0')).join('');
    id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  } else {
    id = r.str();
  }
  const p = newPerson(id as PersonId);
  const flags = r.byte();
  for (let k = 0; k < 3; k++) if (flags & (1 << k)) p.floor[k] = r.uint();
  let t = 0;
  const entries: Entry[] = [];
  for (let n = r.uint(); n > 0; n--) {
    t += r.uint();
    const header = r.uint();
    const kind = header % 4;
    const zigzag = Math.floor(header / 8);
    const m = zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2;
    if (kind > 2 || m === 0) throw new Error(`bad entry in ${id}`);
    const thread = Math.floor(header / 4) % 2 === 1 ? r.u32() : NO_THREAD;
    entries.push({ t, day: calendar.dayOf(t), kind: kind as KindCode, thread, m, reply: -1 });
  }
  p.entries = entries;
  linkReplies(p, maxReplyGapMs);
  return p;
}

const readNullable = (r: ByteReader): number | null => {
  const v = r.uint();
  return v === 0 ? null : v - 1;
};

function readMetrics(r: ByteReader): InsightMetrics {
  const counts = (): WindowCounts => ({ mailsIn: r.uint(), mailsOut: r.uint(), meetings: r.uint() });
  const last7 = counts();
  const last30 = counts();
  const last90 = counts();
  const lastContactedAt = readNullable(r);
  const via = r.byte();
  const lastInboundAt = readNullable(r);
  const lastOutboundAt = readNullable(r);
  const replies90 = r.uint();
  const medianReplyMs90 = readNullable(r);
  const trend = TRENDS[r.byte()];
  const lastContactedVia = via === 0 ? null : KIND_OF[via - 1];
  if (!trend || lastContactedVia === undefined) throw new Error('bad metrics');
  return {
    last7,
    last30,
    last90,
    lastContactedAt,
    lastContactedVia,
    lastInboundAt,
    lastOutboundAt,
    replies90,
    medianReplyMs90,
    trend,
  };
}
