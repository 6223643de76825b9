/**
 * The inputs of `kubesmith import crd`: files, directories (their YAML and JSON files, not recursively),
 * http(s) URLs and `-` (standard input), each read with a size bound (a URL also with a time bound), then
 * split into YAML documents (JSON is YAML). A List (`kubectl get crd -o yaml`) counts as its items.
 * Problems are one line naming the input and, for a document, its number and position.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { KubesmithError } from '../errors.js';
import { yaml } from '../lazy-yaml.js';
import { printable } from '../printable.js';
import { readBlockYaml } from './block-yaml.js';
import type { DocumentOrigin } from './crd.js';

export interface ReadLimits {
  /** The most bytes one input may have. */
  maxBytes: number;
  /** How long a URL may take, in milliseconds, headers and body together. */
  timeoutMs: number;
}

export const DEFAULT_LIMITS: ReadLimits = { maxBytes: 32 * 1024 * 1024, timeoutMs: 30_000 };

export interface ParsedDocument {
  value: unknown;
  origin: DocumentOrigin;
}

/** An input's text, by name. */
export interface InputText {
  name: string;
  text: string;
}

const MAX_ALIAS_COUNT = 100;

const tooBig = (name: string, limits: ReadLimits) =>
  new KubesmithError(`${name}: larger than ${limits.maxBytes} bytes`, {
    hint: 'split the input into smaller files (one per CRD), or check that it is the file you meant; nothing was written',
  });

async function readLocal(file: string, shown: string, limits: ReadLimits): Promise<InputText> {
  const info = await stat(file).catch(() => undefined);
  if (!info) throw new KubesmithError(`${shown}: no such file or directory`, { hint: 'check the path' });
  if (info.size > limits.maxBytes) throw tooBig(shown, limits);
  return { name: shown, text: await readFile(file, 'utf8') };
}

async function readDirectory(dir: string, shown: string, limits: ReadLimits): Promise<InputText[]> {
  const entries = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isFile() && /\.(ya?ml|json)$/.test(e.name) && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  if (entries.length === 0) {
    throw new KubesmithError(`${shown}: no .yaml, .yml or .json file in the directory`, {
      hint: 'give the directory that holds the CRDs, or the files themselves',
    });
  }
  const texts: InputText[] = [];
  for (const name of entries)
    texts.push(await readLocal(path.join(dir, name), path.join(shown, name), limits));
  return texts;
}

async function readUrl(url: string, limits: ReadLimits): Promise<InputText> {
  const shown = printable(url);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  const timedOut = () =>
    new KubesmithError(`${shown}: no complete answer within ${limits.timeoutMs / 1000} s`, {
      hint: 'check the URL and the network, or download the file and import it from disk; nothing was written',
    });
  let response: Response;
  try {
    response = await fetch(url, { signal, redirect: 'follow' });
  } catch (error) {
    if (signal.aborted) throw timedOut();
    throw new KubesmithError(`${shown}: ${(error as Error).message}`, {
      hint: 'check the URL and the network; nothing was written',
    });
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new KubesmithError(`${shown}: HTTP ${response.status}`, {
      hint: 'check the URL; nothing was written',
    });
  }
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > limits.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooBig(shown, limits);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of response.body ?? []) {
      total += chunk.byteLength;
      if (total > limits.maxBytes) {
        await response.body?.cancel().catch(() => undefined);
        throw tooBig(shown, limits);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof KubesmithError) throw error;
    if (signal.aborted) throw timedOut();
    throw new KubesmithError(`${shown}: ${(error as Error).message}`, {
      hint: 'try again; nothing was written',
    });
  }
  return { name: shown, text: Buffer.concat(chunks).toString('utf8') };
}

async function readStdin(stdin: NodeJS.ReadableStream, limits: ReadLimits): Promise<InputText> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    total += buffer.byteLength;
    if (total > limits.maxBytes) throw tooBig('-', limits);
    chunks.push(buffer);
  }
  return { name: '-', text: Buffer.concat(chunks).toString('utf8') };
}

/** The text of each input, in the order given (a directory's files sorted by name). */
export async function readInputs(
  inputs: readonly string[],
  cwd: string,
  stdin: NodeJS.ReadableStream,
  limits: ReadLimits = DEFAULT_LIMITS,
): Promise<InputText[]> {
  const texts: InputText[] = [];
  for (const input of inputs) {
    if (input === '-') texts.push(await readStdin(stdin, limits));
    else if (/^https?:\/\//i.test(input)) texts.push(await readUrl(input, limits));
    else {
      const full = path.resolve(cwd, input);
      const info = await stat(full).catch(() => undefined);
      if (info?.isDirectory()) texts.push(...(await readDirectory(full, input, limits)));
      else texts.push(await readLocal(full, input, limits));
    }
  }
  return texts;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The values of a text's documents, or the one-line error of the first that is not valid YAML. */
function documentValues(name: string, text: string): unknown[] {
  // Most inputs are block YAML as tools write it, which the fast reader reads alone; anything else, errors
  // included, goes through the yaml package.
  const fast = readBlockYaml(text);
  if (fast) return fast;
  const lines = new (yaml().LineCounter)();
  const documents = yaml().parseAllDocuments(text, { prettyErrors: false, lineCounter: lines });
  const list = Array.isArray(documents) ? documents : [documents];
  return list.map((document, index) => {
    const [problem] = document.errors;
    if (problem) {
      const at = lines.linePos(problem.pos[0]);
      const where = at ? `:${at.line}:${at.col}` : '';
      throw new KubesmithError(
        `${name}${where}: document ${index + 1}: malformed YAML: ${printable(problem.message.split('\n')[0] ?? '')}`,
        { hint: 'fix the YAML (or JSON) of the input; nothing was written' },
      );
    }
    try {
      return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown;
    } catch (error) {
      throw new KubesmithError(`${name}: document ${index + 1}: ${printable((error as Error).message)}`, {
        hint: 'fix the YAML of the input; nothing was written',
      });
    }
  });
}

/** The documents of the inputs (empty ones left out, a List's items each one). */
export function parseDocuments(texts: readonly InputText[]): ParsedDocument[] {
  const out: ParsedDocument[] = [];
  for (const { name, text } of texts) {
    for (const [index, value] of documentValues(name, text).entries()) {
      const origin = { input: name, document: index + 1 };
      if (value === null || value === undefined) continue;
      if (
        isObject(value) &&
        typeof value['kind'] === 'string' &&
        value['kind'].endsWith('List') &&
        Array.isArray(value['items'])
      ) {
        for (const item of value['items']) out.push({ value: item, origin });
      } else out.push({ value, origin });
    }
  }
  return out;
}
