import type { Clock } from '../src/clock.js';

/** A clock that moves only when told: backoffs of minutes run in no time. */
export class ManualClock implements Clock {
  private current = 0;
  private timers: { due: number; callback: () => void; id: number }[] = [];
  private nextId = 0;

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ due: this.current + ms, callback, id });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.due <= target).sort((a, b) => a.due - b.due)[0];
      if (!due) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.current = due.due;
      due.callback();
    }
    this.current = target;
  }

  get pending(): number {
    return this.timers.length;
  }
}
