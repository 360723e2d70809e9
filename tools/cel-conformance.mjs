#!/usr/bin/env node
// tools/cel-conformance.mjs owns the side-by-side comparison of the JavaScript CEL engines on our
// own selection of cel-spec behaviours (tools/cel-conformance/cases.json): it is how the project
// chose its engine (README "CEL"). Each engine is run with the options closest to upstream's
// Kubernetes environment (optional types and the strings extension where the engine has them;
// type checking where the engine has a checker). A "check-error" case passes only when the engine
// refuses the expression before evaluating it (upstream refuses such rules when a CRD or policy is
// written); for an engine without a checker the report also counts those it refuses at run time. Engines that are not installed are reported,
// not counted. Usage: node tools/cel-conformance.mjs [--verbose] [--json]
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const fixture = JSON.parse(readFileSync(join(here, 'cel-conformance', 'cases.json'), 'utf8'));
const verbose = process.argv.includes('--verbose');
const asJson = process.argv.includes('--json');

/** Replaces {"$int": "N"} with what an engine uses for a CEL int. */
function vars(value, toInt) {
  if (Array.isArray(value)) return value.map((v) => vars(v, toInt));
  if (value && typeof value === 'object') {
    if (typeof value.$int === 'string') return toInt(value.$int);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, vars(v, toInt)]));
  }
  return value;
}

// An adapter returns {checkError?: string} or {value} or {evalError: string}.
const engines = {
  async '@marcbachmann/cel-js'() {
    const { Environment } = await import('@marcbachmann/cel-js');
    let env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false });
    for (const name of Object.keys(fixture.vars)) env = env.registerVariable(name, 'dyn');
    const bindings = vars(fixture.vars, BigInt);
    return (expr) => {
      let program;
      try {
        program = env.parse(expr);
      } catch (e) {
        return { checkError: `parse: ${e.message}` };
      }
      const checked = program.check();
      if (!checked.valid) return { checkError: checked.error.message };
      try {
        return { value: program(bindings) };
      } catch (e) {
        return { evalError: e.message };
      }
    };
  },
  // Our environment: @marcbachmann/cel-js with the Kubernetes libraries (internal/cel/lib), from
  // the compiled tree (make build); reported as not installed without it.
  async 'clusterd (kubernetesCelEnvironment)'() {
    const { kubernetesCelEnvironment } = await import(join(here, '..', 'dist', 'internal', 'cel', 'cel.js'));
    const env = kubernetesCelEnvironment(Object.fromEntries(Object.keys(fixture.vars).map((n) => [n, 'dyn'])));
    const bindings = vars(fixture.vars, BigInt);
    return (expr) => {
      let program;
      try {
        program = env.parse(expr);
      } catch (e) {
        return { checkError: `parse: ${e.message}` };
      }
      const checked = program.check();
      if (!checked.valid) return { checkError: checked.error.message };
      try {
        return { value: program(bindings) };
      } catch (e) {
        return { evalError: e.message };
      }
    };
  },
  async '@bufbuild/cel'() {
    const cel = await import('@bufbuild/cel');
    const { strings } = await import('@bufbuild/cel/ext');
    const env = cel.celEnv({ funcs: strings, variables: Object.fromEntries(Object.keys(fixture.vars).map((n) => [n, cel.CelScalar.DYN])) });
    const bindings = vars(fixture.vars, BigInt);
    // The package exports no type checker (parse, plan, run only), so like cel-js it is judged
    // without one.
    return (expr) => {
      try {
        const out = cel.plan(env, cel.parse(expr))(bindings);
        if (cel.isCelError(out)) return { evalError: out.message, noChecker: true };
        return { value: out, noChecker: true };
      } catch (e) {
        return { evalError: e.message, noChecker: true };
      }
    };
  },
  async 'cel-js'() {
    const { evaluate } = await import('cel-js');
    const bindings = vars(fixture.vars, Number);
    return (expr) => {
      try {
        return { value: evaluate(expr, bindings), noChecker: true };
      } catch (e) {
        return { evalError: e.message, noChecker: true };
      }
    };
  },
};

function judge(want, got) {
  if (want === 'true') return got.value === true;
  if (want === 'check-error') return 'checkError' in got;
  if (want === 'eval-error') return 'evalError' in got;
  throw new Error(`unknown want ${want}`);
}

const results = {};
for (const [name, load] of Object.entries(engines)) {
  let run;
  try {
    run = await load();
  } catch (e) {
    results[name] = { missing: e.message.split('\n')[0] };
    continue;
  }
  const perSection = {};
  let passed = 0;
  let total = 0;
  let runtimeOnly = 0;
  const failures = [];
  for (const [section, cases] of Object.entries(fixture.sections)) {
    let sectionPassed = 0;
    for (const [expr, want] of cases) {
      let got;
      try {
        got = run(expr);
      } catch (e) {
        got = { evalError: `adapter: ${e.message}` };
      }
      const ok = judge(want, got);
      if (!ok && want === 'check-error' && 'evalError' in got) runtimeOnly++;
      total++;
      if (ok) {
        passed++;
        sectionPassed++;
      } else {
        failures.push({ section, expr, want, got: 'value' in got ? show(got.value) : (got.checkError ?? got.evalError).split('\n')[0] });
      }
    }
    perSection[section] = `${sectionPassed}/${cases.length}`;
  }
  results[name] = { passed, total, perSection, failures, runtimeOnly };
}

function show(v) {
  try {
    return `value ${typeof v === 'object' ? JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}` : x)) : String(v)}`;
  } catch {
    return `value ${String(v)}`;
  }
}

if (asJson) {
  console.log(JSON.stringify(results, null, 2));
} else {
  const sections = Object.keys(fixture.sections);
  const names = Object.keys(results);
  console.log(['section', ...names].join(' | '));
  for (const s of sections) console.log([s, ...names.map((n) => results[n].perSection?.[s] ?? 'n/a')].join(' | '));
  console.log(['total', ...names.map((n) => (results[n].missing ? `not installed` : `${results[n].passed}/${results[n].total}`))].join(' | '));
  console.log(['check-error cases refused only at run time', ...names.map((n) => (results[n].missing ? '' : String(results[n].runtimeOnly)))].join(' | '));
  if (verbose) {
    for (const n of names) {
      for (const f of results[n].failures ?? []) console.log(`${n}: [${f.section}] ${f.expr} — want ${f.want}, got ${f.got}`);
    }
  }
}
