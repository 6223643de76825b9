/**
 * Adding code to existing files at scaffold markers: `// +kubesmith:scaffold:<point>` in TypeScript,
 * `# +kubesmith:scaffold:<point>` in YAML. A fragment goes right above its marker, with the marker's
 * indentation; a fragment already present is not added again, so re-running a command changes nothing.
 */
import path from 'node:path';

const commentPrefix: Record<string, string> = {
  '.ts': '//',
  '.js': '//',
  '.yaml': '#',
  '.yml': '#',
  '.go': '//',
  Dockerfile: '#',
};

export function markerComment(file: string, point: string): string {
  const ext = path.extname(file);
  const prefix = commentPrefix[ext] ?? commentPrefix[path.basename(file)];
  if (prefix === undefined) throw new Error(`no scaffold marker syntax for ${file}`);
  return `${prefix} +kubesmith:scaffold:${point}`;
}

export type InsertResult = { ok: true; content: string } | { ok: false; reason: 'no-marker' };

/**
 * Inserts each line of `fragment` above the marker line of `point` in `content`, unless an identical
 * line (ignoring surrounding whitespace) is already in the file.
 */
export function insertAtMarker(file: string, content: string, point: string, fragment: string): InsertResult {
  const marker = markerComment(file, point);
  const lines = content.split('\n');
  const index = lines.findIndex((line) => line.trim() === marker);
  if (index < 0) return { ok: false, reason: 'no-marker' };
  const indent = /^\s*/.exec(lines[index] ?? '')?.[0] ?? '';
  const present = new Set(lines.map((line) => line.trim()));
  const added = fragment
    .split('\n')
    .filter((line) => line.trim() !== '' && !present.has(line.trim()))
    .map((line) => indent + line.trim());
  if (added.length === 0) return { ok: true, content };
  lines.splice(index, 0, ...added);
  return { ok: true, content: lines.join('\n') };
}

/**
 * Adds a multi-line block (a function, a test) above a scaffold marker, keeping its own indentation under
 * the marker's. The block is added once: when its lines are already in the file, in order, nothing changes.
 */
export function insertBlockAtMarker(
  file: string,
  content: string,
  point: string,
  block: string,
): InsertResult {
  const marker = markerComment(file, point);
  const lines = content.split('\n');
  const index = lines.findIndex((line) => line.trim() === marker);
  if (index < 0) return { ok: false, reason: 'no-marker' };
  const blockLines = block.replace(/\n+$/, '').split('\n');
  const normalise = (text: string[]) =>
    text
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .join('\n');
  const wanted = normalise(blockLines);
  if (wanted === '' || normalise(lines).includes(wanted)) return { ok: true, content };
  const indent = /^\s*/.exec(lines[index] ?? '')?.[0] ?? '';
  lines.splice(index, 0, ...blockLines.map((line) => (line.trim() === '' ? '' : indent + line)), '');
  return { ok: true, content: lines.join('\n') };
}
