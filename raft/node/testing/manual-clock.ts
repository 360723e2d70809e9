// raft/node/testing/manual-clock.ts owns a Clock that only moves when a test says so, so that
// driver tests run without real sleeps: advance(ms) fires due timeouts and intervals in time order.

import type { Clock } from '../raft-node.js';

interface Timer {
  id: number;
  due: number;
  every: number | null;
  fn: () => void;
}

export class ManualClock implements Clock {
  private now = 0;
  private nextId = 1;
  private timers = new Map<number, Timer>();

  setInterval(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.now + ms, every: Math.max(1, ms), fn });
    return id;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.now + ms, every: null, fn });
    return id;
  }

  clearInterval(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward by `ms`, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      let next: Timer | null = null;
      for (const t of this.timers.values()) if (t.due <= until && (!next || t.due < next.due)) next = t;
      if (!next) break;
      this.now = next.due;
      if (next.every === null) this.timers.delete(next.id);
      else next.due += next.every;
      next.fn();
    }
    this.now = until;
  }
}
