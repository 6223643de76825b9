/**
 * The CEL rules of the generated CRDs, compiled as the API server compiles them when the CRD is applied
 * (schema/cel-compile.ts): each problem at the marker that made the rule, at the expression's own column
 * where the problem has one, else at the kind. The compiler, and the CEL implementation under it, load
 * only when some CRD has a rule.
 */
import type { Report } from '../markers/index.js';
import { RULE_ORIGIN, type JSONSchemaProps, type ValidationRule } from '../schema/types.js';
import type { GeneratedFile } from './crd.js';

interface CrdDocument {
  spec: {
    names: { kind: string };
    versions: { name: string; schema: { openAPIV3Schema: JSONSchemaProps } }[];
  };
}

const versionsOf = (file: GeneratedFile) =>
  file.documents.flatMap((d) => (d as CrdDocument).spec?.versions ?? []);

function schemaHasRules(s: JSONSchemaProps | undefined): boolean {
  if (!s) return false;
  if ((s['x-kubernetes-validations'] ?? []).length > 0) return true;
  // A loop rather than .some() and a callback: it runs on every schema of every CRD.
  const properties = Object.values(s.properties ?? {});
  for (let i = 0; i < properties.length; i++) if (schemaHasRules(properties[i])) return true;
  return (
    schemaHasRules(s.items) ||
    (typeof s.additionalProperties === 'object' && schemaHasRules(s.additionalProperties))
  );
}

/** Whether a generated CRD has a CEL rule anywhere. */
export function hasRules(file: GeneratedFile): boolean {
  return versionsOf(file).some((v) => schemaHasRules(v.schema?.openAPIV3Schema));
}

/** The position of a problem: the marker's, moved to the expression's character where it is known. */
function positionOf(
  rule: ValidationRule,
  part: 'rule' | 'messageExpression' | 'optionalOldSelf' | 'fieldPath',
  offset: number | undefined,
) {
  const origin = rule[RULE_ORIGIN];
  if (!origin) return undefined;
  const at = { file: origin.file, line: origin.line, col: origin.col };
  if (part === 'fieldPath' && rule.fieldPath !== undefined) {
    const start = origin.raw.indexOf(rule.fieldPath, origin.raw.indexOf('fieldPath='));
    return start < 0 ? at : { ...at, col: origin.col + start };
  }
  const expression = part === 'messageExpression' ? rule.messageExpression : rule.rule;
  if (offset === undefined || expression === undefined || part === 'optionalOldSelf') return at;
  // The expression as written in the marker (it is found only when written without escapes).
  const start = origin.raw.indexOf(expression);
  return start < 0 ? at : { ...at, col: origin.col + start + offset };
}

/** Compiles the rules of every version of `files`, reporting each problem. */
export async function compileCrdRules(files: readonly GeneratedFile[], report: Report): Promise<void> {
  const { compileAll } = await import('../schema/cel-compile.js');
  const versions = files.flatMap((file) =>
    versionsOf(file).map((version) => ({
      file,
      kind: (file.documents[0] as CrdDocument).spec.names.kind,
      version,
    })),
  );
  const results = compileAll(versions.map(({ version }) => version.schema.openAPIV3Schema));
  versions.forEach(({ file, kind, version }, i) => {
    for (const problem of results[i]!) {
      const at = positionOf(problem.rule, problem.part, problem.offset) ??
        file.source ?? { file: file.path, line: 1, col: 1 };
      report.error(
        at,
        problem.cost ? 'rule-cost' : 'invalid-rule',
        `${kind} ${version.name}: ${problem.message}`,
        problem.hint,
      );
    }
  });
}
