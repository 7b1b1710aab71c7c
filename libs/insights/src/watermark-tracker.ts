import { err, ok, type Result } from '@syncline/core';
import type { ConnectionStatus, InsightsError } from './types';

export interface ConnectionWatermark {
  connectionId: string;
  /** Event time before which this connection's cursor has delivered everything. */
  watermark: number;
  status: ConnectionStatus;
  /** The most a diff from it has arrived behind its own watermark (what its next estimate should allow). */
  maxLatenessMs: number;
}

/**
 * A workspace's watermark: the minimum over its connections' watermarks, never moving back.
 * A paused or failing connection still counts: it holds the watermark where it stopped (so
 * windows wait for it rather than close without its events), and `heldBy` names it. Only
 * removing the connection lets the watermark pass it.
 */
export class WatermarkTracker {
  private readonly connections = new Map<string, ConnectionWatermark>();
  private current = Number.NEGATIVE_INFINITY;

  get watermark(): number {
    return this.current;
  }

  connect(connectionId: string, watermark: number): void {
    const known = this.connections.get(connectionId);
    if (known) {
      known.status = 'live';
      known.watermark = Math.max(known.watermark, watermark);
    } else {
      this.connections.set(connectionId, { connectionId, watermark, status: 'live', maxLatenessMs: 0 });
    }
    this.recompute();
  }

  advance(connectionId: string, watermark: number): Result<number, InsightsError> {
    const known = this.connections.get(connectionId);
    if (!known) return err({ code: 'UnknownConnection', message: `no connection ${connectionId}` });
    if (watermark < known.watermark) {
      return err({
        code: 'WatermarkRegressed',
        message: `${connectionId}: watermark ${watermark} is behind ${known.watermark}; kept`,
      });
    }
    known.watermark = watermark;
    return ok(this.recompute());
  }

  setStatus(connectionId: string, status: ConnectionStatus): Result<number, InsightsError> {
    const known = this.connections.get(connectionId);
    if (!known) return err({ code: 'UnknownConnection', message: `no connection ${connectionId}` });
    known.status = status;
    return ok(this.current);
  }

  remove(connectionId: string): Result<number, InsightsError> {
    if (!this.connections.delete(connectionId)) {
      return err({ code: 'UnknownConnection', message: `no connection ${connectionId}` });
    }
    return ok(this.recompute());
  }

  /** Records how far behind its connection's watermark an event arrived. */
  observe(connectionId: string, eventTime: number): void {
    const known = this.connections.get(connectionId);
    if (known && eventTime < known.watermark) {
      known.maxLatenessMs = Math.max(known.maxLatenessMs, known.watermark - eventTime);
    }
  }

  /** The connections the workspace watermark waits for, with their status. */
  heldBy(): ConnectionWatermark[] {
    const all = this.list();
    const lowest = Math.min(...all.map((c) => c.watermark));
    return all.filter((c) => c.watermark === lowest);
  }

  list(): ConnectionWatermark[] {
    return [...this.connections.values()]
      .map((c) => ({ ...c }))
      .sort((a, b) => (a.connectionId < b.connectionId ? -1 : a.connectionId > b.connectionId ? 1 : 0));
  }

  static restore(current: number, connections: readonly ConnectionWatermark[]): WatermarkTracker {
    const tracker = new WatermarkTracker();
    tracker.current = current;
    for (const c of connections) tracker.connections.set(c.connectionId, { ...c });
    return tracker;
  }

  private recompute(): number {
    let lowest = Number.POSITIVE_INFINITY;
    for (const c of this.connections.values()) lowest = Math.min(lowest, c.watermark);
    if (Number.isFinite(lowest) && lowest > this.current) this.current = lowest;
    return this.current;
  }
}
