/**
 * The CEL conformance data (cel.dev/expr's simple suite, the version kube-apiserver 1.37 pins) through
 * kubesmith's CEL engine as CRD rules get it (runner.ts): every test of the parts CRD rules use passes,
 * or is named in exclusions.ts with its reason. A test that fails and is not named fails here, and so
 * does a named one that passes (a stale exclusion). The data comes from the Go module proxy, checked
 * against a pinned hash and cached (scripts/cel-conformance.mjs, which `npm test` runs first).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { envtestRequired } from '../../runtime/src/envtest/index.js';
// @ts-expect-error -- a plain .mjs script without types
import { CEL_EXPR_VERSION, ensureConformanceData } from '../../scripts/cel-conformance.mjs';
import { EXCLUDED_TESTS, REASON_NAMES, SKIPPED_FILES, SKIPPED_SECTIONS, type Reason } from './exclusions.js';
import { Inexpressible, runTest } from './runner.js';
import { Fields, parseTextProto } from './textproto.js';

async function conformanceData(): Promise<string | undefined> {
  try {
    return (await ensureConformanceData(process.env)) as string;
  } catch (error) {
    const e = error as Error & { hint?: string };
    if (envtestRequired(process.env)) throw new Error(`${e.message}\nhint: ${e.hint ?? ''}`);
    console.warn(`skipping the CEL conformance tests: ${e.message} (hint: ${e.hint ?? ''})`);
    return undefined;
  }
}

const dir = await conformanceData();

interface FileReport {
  tests: number;
  passed: number;
  /** Excluded tests (one by one or by section), by reason. */
  excluded: Map<Reason, number>;
  /** Tests of a file skipped whole. */
  skipped: number;
}

describe.skipIf(dir === undefined)(`CEL conformance (cel.dev/expr ${CEL_EXPR_VERSION as string})`, () => {
  it('passes every test of the parts CRD rules use, or names why not', () => {
    const files = readdirSync(dir!)
      .filter((name) => name.endsWith('.textproto'))
      .sort();
    expect(files.length).toBeGreaterThan(20);
    const reports = new Map<string, FileReport>();
    const failures: string[] = [];
    const seen = new Set<string>();
    for (const file of files) {
      const short = file.replace(/\.textproto$/, '');
      // Every file is read, skipped or not: the reader must know the whole format it is given.
      const data = new Fields(parseTextProto(readFileSync(path.join(dir!, file), 'utf8'), file), file);
      const report: FileReport = { tests: 0, passed: 0, excluded: new Map(), skipped: 0 };
      reports.set(short, report);
      const exclude = (reason: Reason) => report.excluded.set(reason, (report.excluded.get(reason) ?? 0) + 1);
      for (const section of data.messages('section')) {
        const sectionId = `${short}/${section.string('name') ?? ''}`;
        for (const test of section.messages('test')) {
          report.tests++;
          if (SKIPPED_FILES[file]) {
            report.skipped++;
            continue;
          }
          const sectionReason = SKIPPED_SECTIONS[sectionId];
          if (sectionReason) {
            seen.add(sectionId);
            exclude(sectionReason);
            continue;
          }
          const id = `${sectionId}/${test.string('name') ?? ''}`;
          const reason = EXCLUDED_TESTS.get(id);
          let outcome: { ok: boolean; why?: string };
          try {
            outcome = runTest(test);
          } catch (error) {
            if (!(error instanceof Inexpressible)) throw error;
            outcome = { ok: false, why: `needs ${error.message}` };
          }
          if (reason) {
            seen.add(id);
            if (outcome.ok) failures.push(`${id}: passes, but exclusions.ts names it: drop the exclusion`);
            else exclude(reason);
          } else if (outcome.ok) report.passed++;
          else failures.push(`${id}: ${test.string('expr')}: ${outcome.why}`);
        }
      }
    }
    for (const id of [...EXCLUDED_TESTS.keys(), ...Object.keys(SKIPPED_SECTIONS)])
      if (!seen.has(id)) failures.push(`${id}: named in exclusions.ts, but no such test or section`);
    for (const file of Object.keys(SKIPPED_FILES))
      if (!files.includes(file)) failures.push(`${file}: named in exclusions.ts, but no such file`);

    console.log(summary(reports));
    expect(failures).toEqual([]);
  });
});

/** Per file: tests, run, passed, excluded by kind, skipped; then the count of each reason. */
function summary(reports: Map<string, FileReport>): string {
  const lines = ['file | tests | ran | passed | excluded (unreachable / cel-js) | file skipped'];
  const total = { tests: 0, ran: 0, passed: 0, unreachable: 0, celJs: 0, skipped: 0 };
  const byReason = new Map<string, number>();
  for (const [file, r] of reports) {
    let unreachable = 0;
    let celJs = 0;
    for (const [reason, n] of r.excluded) {
      if (reason.kind === 'unreachable') unreachable += n;
      else celJs += n;
      const name = REASON_NAMES.get(reason) ?? sectionName(reason);
      byReason.set(name, (byReason.get(name) ?? 0) + n);
    }
    const ran = r.tests - r.skipped - unreachable - celJs;
    lines.push(`${file} | ${r.tests} | ${ran} | ${r.passed} | ${unreachable} / ${celJs} | ${r.skipped}`);
    total.tests += r.tests;
    total.ran += ran;
    total.passed += r.passed;
    total.unreachable += unreachable;
    total.celJs += celJs;
    total.skipped += r.skipped;
  }
  lines.push(
    `total | ${total.tests} | ${total.ran} | ${total.passed} | ${total.unreachable} / ${total.celJs} | ${total.skipped}`,
  );
  lines.push('', 'excluded, by reason:');
  for (const [name, n] of [...byReason].sort((a, b) => b[1] - a[1])) lines.push(`  ${name}: ${n}`);
  return lines.join('\n');
}

function sectionName(reason: Reason): string {
  const section = Object.entries(SKIPPED_SECTIONS).find(([, r]) => r === reason);
  return section ? `section ${section[0]}` : reason.why;
}
