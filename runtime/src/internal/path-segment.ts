/**
 * Names and namespaces become segments of a request's path: `..` there would climb out of the resource
 * (`DELETE .../namespaces/default/configmaps/..` is `DELETE .../namespaces/default` once the URL is
 * normalised). The rules and words are client-go's (`rest.IsValidPathSegmentName`, `Request.Name`,
 * `Request.Namespace`): a name may not be empty, `.` or `..`, nor contain `/` or `%`.
 */

/** What is wrong with `name` as a path segment, in client-go's words; empty when nothing. */
function pathSegmentProblems(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

/**
 * Throws before any request when `name` (when given) or `namespace` (when given and non-empty: empty means
 * none) cannot be a path segment. `what` says which call: `delete ConfigMap`.
 */
export function checkPathSegments(what: string, name: string | undefined, namespace?: string): void {
  if (name !== undefined && name === '') {
    throw new Error(`${what}: resource name may not be empty\nhint: pass the name of the object`);
  }
  for (const [field, value] of [
    ['resource name', name],
    ['namespace', namespace],
  ] as const) {
    const problems = value ? pathSegmentProblems(value) : [];
    if (problems.length > 0) {
      throw new Error(
        `${what}: invalid ${field} ${JSON.stringify(value)}: ${problems.join(', ')}\n` +
          'hint: object names and namespaces are single path segments, never . or .., without / or %',
      );
    }
  }
}
