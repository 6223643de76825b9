/** Pieces several commands share: flag parsers and printing a plan. */
import { InvalidArgumentError } from 'commander';
import type { Output } from './output.js';
import type { Plan, PlanAction } from '../scaffold/plan.js';
import { describePlan, planSummary } from '../scaffold/plan.js';

/** `--resource`, `--resource=true`, `--resource=false`, as kubebuilder's boolean flags. */
export function parseBoolean(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('expected true or false.');
}

const actionStyle: Record<PlanAction, 'green' | 'yellow' | 'red' | 'dim' | 'cyan'> = {
  create: 'green',
  overwrite: 'yellow',
  update: 'cyan',
  remove: 'yellow',
  unchanged: 'dim',
  conflict: 'red',
};

/** Prints the plan for people (stderr) and, with --json, the result (stdout). */
export function reportPlan(out: Output, plan: Plan, result: Record<string, unknown>): void {
  printPlan(out, plan);
  out.result(planResult(plan, result));
}

/** The plan for people, on stderr: warnings, then a line per file. */
export function printPlan(out: Output, plan: Plan): void {
  for (const warning of plan.warnings) out.warn(warning);
  out.info(describePlan(plan, (action, text) => out.style(actionStyle[action], text)));
}

/** The --json result of a command that applied (or, with --dry-run, printed) a plan. */
export function planResult(plan: Plan, result: Record<string, unknown>): Record<string, unknown> {
  return { ...result, files: planSummary(plan), warnings: plan.warnings };
}
