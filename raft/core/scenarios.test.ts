// Runs every scenario script under raft/testdata against the interaction environment and
// compares each command's output with the transcript checked in beside it. UPDATE_GOLDEN=1
// rewrites the files with the actual output instead; review the diff before committing.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InteractionEnv } from './interaction/env.js';
import { parseCommand, parseScript, renderScript } from './interaction/script.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'testdata');
const update = process.env.UPDATE_GOLDEN === '1';

describe('raft scenario transcripts', () => {
  const files = readdirSync(testdata).filter((f) => f.endsWith('.txt')).sort();
  it('has scenarios', () => {
    expect(files.length).toBeGreaterThan(0);
  });
  for (const file of files) {
    it(file, () => {
      const path = join(testdata, file);
      const { blocks, trailer } = parseScript(readFileSync(path, 'utf8'));
      const env = new InteractionEnv();
      const rendered: { preamble: string[]; command: string; output: string[] }[] = [];
      for (const b of blocks) {
        const output = env.run(parseCommand(b.command));
        rendered.push({ preamble: b.preamble, command: b.command, output });
        if (!update) {
          expect(output.join('\n'), `${file}:${b.line}: > ${b.command}`).toBe(b.expected.join('\n'));
        }
      }
      if (update) writeFileSync(path, renderScript(rendered, trailer));
    });
  }
});
