// raft/core/interaction/script.ts owns the scenario-script file format under raft/testdata:
//
//   # comments describe the next command (and are kept on rewrite)
//   > command arg key=value key=(1,2)
//   expected output, one or more non-blank lines
//   <blank line>
//
// parseScript reads a file into blocks; renderScript writes blocks back with new outputs, so
// UPDATE_GOLDEN=1 can regenerate a file and reviewers read the diff.

export interface ScriptBlock {
  /** Comment lines (with their leading '#') and blank lines before the command. */
  preamble: string[];
  /** The command line without the leading '> '. */
  command: string;
  /** The recorded output lines. */
  expected: string[];
  /** 1-based line number of the command, for error messages. */
  line: number;
}

export function parseScript(text: string): { blocks: ScriptBlock[]; trailer: string[] } {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const blocks: ScriptBlock[] = [];
  let preamble: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const l = lines[i];
    if (!l.startsWith('> ')) {
      preamble.push(l);
      i++;
      continue;
    }
    const block: ScriptBlock = { preamble, command: l.slice(2).trim(), expected: [], line: i + 1 };
    i++;
    while (i < lines.length && lines[i] !== '') {
      block.expected.push(lines[i]);
      i++;
    }
    if (i < lines.length) i++; // the blank line closing the block
    blocks.push(block);
    preamble = [];
  }
  return { blocks, trailer: preamble };
}

export function renderScript(blocks: { preamble: string[]; command: string; output: string[] }[], trailer: string[]): string {
  const out: string[] = [];
  for (const b of blocks) {
    out.push(...b.preamble, `> ${b.command}`, ...b.output, '');
  }
  out.push(...trailer);
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}

export interface ParsedCommand {
  name: string;
  /** Positional arguments, in order. */
  args: string[];
  /** key=value arguments; (a,b,c) lists are kept as their raw text, see listArg. */
  kv: Map<string, string>;
}

export function parseCommand(line: string): ParsedCommand {
  const tokens = line.split(/\s+/).filter((t) => t.length > 0);
  const [name, ...rest] = tokens;
  const args: string[] = [];
  const kv = new Map<string, string>();
  for (const t of rest) {
    const eq = t.indexOf('=');
    if (eq > 0) kv.set(t.slice(0, eq), t.slice(eq + 1));
    else args.push(t);
  }
  return { name, args, kv };
}

/** "(1,2,3)" or "1" to [1,2,3] / [1]. */
export function listArg(v: string | undefined): number[] {
  if (v === undefined) return [];
  const inner = v.replace(/^\(/, '').replace(/\)$/, '');
  if (inner.trim() === '') return [];
  return inner.split(',').map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n)) throw new Error(`not an id list: ${v}`);
    return n;
  });
}
