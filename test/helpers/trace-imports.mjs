// Loaded with `node --import`: records every module URL that gets loaded, one per line, in the file
// named by KUBESMITH_TRACE_IMPORTS. Used to check that start-up does not load heavy modules.
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.KUBESMITH_TRACE_IMPORTS, result.url + '\\n');
  return result;
}`),
);
