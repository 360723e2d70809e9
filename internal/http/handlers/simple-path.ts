// internal/http/handlers/simple-path owns the dotted JSON paths definitions use to point into
// custom resources (`.spec.replicas`, `.status.labelSelector`, printer columns): reading a
// value and writing one. Only field steps, optionally with [n] indices: what upstream allows
// for scale paths and what printer columns use in practice. Imports: nothing from the project.

type Obj = Record<string, unknown>;

const STEP = /([^.[\]]+)|\[(\d+)\]/g;

function steps(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  for (const m of path.replace(/^\{|\}$/g, '').matchAll(STEP)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}

export function readPath(root: unknown, path: string): unknown {
  let v: unknown = root;
  for (const s of steps(path)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Obj)[s as string];
  }
  return v;
}

/** Sets a value, creating intermediate objects; returns false when the path runs into a non-object. */
export function writePath(root: Obj, path: string, value: unknown): boolean {
  const ss = steps(path);
  let v: Obj = root;
  for (let i = 0; i < ss.length - 1; i++) {
    const s = ss[i]!;
    const next = (v as Record<string | number, unknown>)[s];
    if (next === undefined) (v as Record<string | number, unknown>)[s] = {};
    else if (next === null || typeof next !== 'object') return false;
    v = (v as Record<string | number, unknown>)[s] as Obj;
  }
  (v as Record<string | number, unknown>)[ss[ss.length - 1]!] = value;
  return true;
}
