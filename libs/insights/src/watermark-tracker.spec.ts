import { describe, expect, it } from 'vitest';
import { WatermarkTracker } from './watermark-tracker';

describe('WatermarkTracker', () => {
  it('is the minimum over the connections, and names who holds it', () => {
    const t = new WatermarkTracker();
    expect(t.watermark).toBe(Number.NEGATIVE_INFINITY);
    t.connect('calendar', 50);
    t.connect('gmail', 100);
    expect(t.watermark).toBe(50);
    expect(t.heldBy().map((c) => c.connectionId)).toEqual(['calendar']);
    t.advance('calendar', 300);
    expect(t.watermark).toBe(100);
    expect(t.heldBy().map((c) => c.connectionId)).toEqual(['gmail']);
  });

  it('keeps a paused or failing connection in the minimum: it holds the watermark visibly', () => {
    const t = new WatermarkTracker();
    t.connect('gmail', 100);
    t.connect('calendar', 100);
    t.setStatus('calendar', 'paused');
    t.advance('gmail', 500);
    expect(t.watermark).toBe(100);
    expect(t.heldBy()).toEqual([
      { connectionId: 'calendar', watermark: 100, status: 'paused', maxLatenessMs: 0 },
    ]);
    t.setStatus('calendar', 'live');
    expect(t.watermark).toBe(100); // resumed, but it has not caught up yet
    t.advance('calendar', 400);
    expect(t.watermark).toBe(400);
  });

  it('never moves back: a regressing advance is refused, a late-joining connection holds from where it is', () => {
    const t = new WatermarkTracker();
    t.connect('gmail', 100);
    const back = t.advance('gmail', 90);
    expect(back.ok ? null : back.error.code).toBe('WatermarkRegressed');
    t.connect('outlook', 20);
    expect(t.watermark).toBe(100);
    t.advance('gmail', 200);
    expect(t.watermark).toBe(100);
    t.advance('outlook', 150);
    expect(t.watermark).toBe(150);
  });

  it('lets the watermark pass a removed connection; an unknown one is an error', () => {
    const t = new WatermarkTracker();
    t.connect('gmail', 100);
    t.connect('calendar', 10);
    t.remove('calendar');
    expect(t.watermark).toBe(100);
    const unknown = t.advance('nope', 1);
    expect(unknown.ok ? null : unknown.error.code).toBe('UnknownConnection');
  });

  it('records how far behind its own watermark a connection delivered events', () => {
    const t = new WatermarkTracker();
    t.connect('gmail', 1000);
    t.observe('gmail', 400);
    t.observe('gmail', 1200);
    expect(t.list()[0]?.maxLatenessMs).toBe(600);
  });
});
