// raft/core/logger.ts owns the logging seam. Like @opentelemetry/api's no-op defaults, the
// default logger does nothing and never throws, so the core can log freely without callers
// having to wire anything up. Messages are built lazily only if the level is enabled.

export type RaftLogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface RaftLogger {
  /** Whether messages at this level are wanted; lets the core skip building strings. */
  enabled(level: RaftLogLevel): boolean;
  /** Called synchronously from within the core; must not throw and must not call back into raft. */
  log(level: RaftLogLevel, message: string): void;
}

export const noopLogger: RaftLogger = {
  enabled: () => false,
  log: () => {},
};

const ORDER: Record<RaftLogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** A logger that hands lines at or above `minLevel` to `sink` (tests collect them). */
export function levelLogger(minLevel: RaftLogLevel | 'none', sink: (line: string) => void): RaftLogger {
  return {
    enabled: (level) => minLevel !== 'none' && ORDER[level] >= ORDER[minLevel],
    log: (level, message) => {
      if (minLevel !== 'none' && ORDER[level] >= ORDER[minLevel]) sink(`${level.toUpperCase()} ${message}`);
    },
  };
}
