import { readFileSync } from 'node:fs';

/** The version of this kubesmith, read from its own package.json (dist/ and src/ both sit one level below it). */
export const kubesmithVersion: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
