// bench/support/proc-stats owns reading another process's memory and CPU time from /proc
// (Linux): resident set size, its peak (VmHWM, which writing 5 to clear_refs resets), and
// user+system CPU time. Readers return undefined when /proc is unavailable instead of
// throwing, so a figure is reported as missing rather than the run failing. Imports: node only.

import { readFileSync, writeFileSync } from 'node:fs';

export interface MemorySample {
  rssBytes: number;
  peakRssBytes: number;
}

export function readMemory(pid: number): MemorySample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    const rssBytes = kb('VmRSS');
    const peakRssBytes = kb('VmHWM');
    return Number.isFinite(rssBytes) ? { rssBytes, peakRssBytes } : undefined;
  } catch {
    return undefined;
  }
}

/** Resets VmHWM to the current RSS; false when the kernel refuses (then sample instead). */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU time (user + system) the process has used so far, in milliseconds. */
export function readCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; fields after the closing paren are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

// USER_HZ is 100 on every Linux architecture Node supports; /proc reports in those ticks.
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * Samples RSS every `intervalMs` until stopped and keeps the largest value: a fallback for
 * the kernel's VmHWM when clear_refs cannot be written, and a cross-check otherwise.
 */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  maxRssBytes = 0;

  constructor(
    private readonly pid: number,
    private readonly intervalMs = 5,
  ) {}

  start(): this {
    const tick = () => {
      const m = readMemory(this.pid);
      if (m && m.rssBytes > this.maxRssBytes) this.maxRssBytes = m.rssBytes;
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    return this;
  }

  stop(): number {
    if (this.timer) clearInterval(this.timer);
    const m = readMemory(this.pid);
    if (m && m.rssBytes > this.maxRssBytes) this.maxRssBytes = m.rssBytes;
    return this.maxRssBytes;
  }
}

/** Measures a process's CPU use over a window, as a fraction of one core. */
export function cpuMeter(pid: number): { stop(): number | undefined } {
  const cpu0 = readCpuMs(pid);
  const t0 = performance.now();
  return {
    stop() {
      const cpu1 = readCpuMs(pid);
      if (cpu0 === undefined || cpu1 === undefined) return undefined;
      return (cpu1 - cpu0) / (performance.now() - t0);
    },
  };
}

/** CPU time all processes on the machine used so far (busy jiffies in /proc/stat), in ms. */
export function readMachineBusyMs(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    // cpu user nice system idle iowait irq softirq steal ...
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!;
    return (busy * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Measures the whole machine's busy CPU over a window, in cores. */
export function machineMeter(): { stop(): number | undefined } {
  const busy0 = readMachineBusyMs();
  const t0 = performance.now();
  return {
    stop() {
      const busy1 = readMachineBusyMs();
      if (busy0 === undefined || busy1 === undefined) return undefined;
      return (busy1 - busy0) / (performance.now() - t0);
    },
  };
}
