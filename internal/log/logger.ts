// internal/log owns structured logging: one JSON object per line on stderr, with a level
// threshold (quiet by default: warn). Components take a Logger; tests pass the silent one.
// Imports: nothing from the project.

export type Level = 'error' | 'warn' | 'info' | 'debug';

const RANK: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
  enabled(level: Level): boolean;
  child(fields: Record<string, unknown>): Logger;
}

export function createLogger(level: Level, write: (line: string) => void = (l) => process.stderr.write(l), base: Record<string, unknown> = {}): Logger {
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] > RANK[level]) return;
    const record: Record<string, unknown> = { ts: new Date().toISOString(), level: lvl, msg, ...base, ...fields };
    for (const [k, v] of Object.entries(record)) if (v instanceof Error) record[k] = v.stack ?? v.message;
    write(JSON.stringify(record) + '\n');
  };
  return {
    error: (m, f) => emit('error', m, f),
    warn: (m, f) => emit('warn', m, f),
    info: (m, f) => emit('info', m, f),
    debug: (m, f) => emit('debug', m, f),
    enabled: (l) => RANK[l] <= RANK[level],
    child: (fields) => createLogger(level, write, { ...base, ...fields }),
  };
}

export const silentLogger: Logger = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
  enabled: () => false,
  child: () => silentLogger,
};
