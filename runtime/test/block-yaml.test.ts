/**
 * The kubeconfig block YAML reader (runtime/src/internal/block-yaml.ts) against the `yaml` package: what
 * it reads, it reads as `yaml.parse` does; what it does not understand, it leaves to `yaml.parse`
 * (undefined), and the kubeconfig loader then reads it with the full parser.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseBlockYaml } from '../src/internal/block-yaml.js';
import { parseKubeconfig } from '../src/internal/kubeconfig-file.js';
import { loadKubeConfig } from '../src/kubeconfig.js';

const full = (text: string) => parse(text, { maxAliasCount: 100 }) as unknown;

/** kubectl's layout: sequences at their key's column, as `kubectl config view --raw` and kind write. */
const KUBECTL = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=
    server: https://127.0.0.1:40345
  name: kind-kind
- cluster:
    insecure-skip-tls-verify: true
    proxy-url: http://proxy.example:3128
    server: https://10.0.0.1:6443/k8s/clusters/c-1
    tls-server-name: kubernetes.default
    extensions:
    - name: client.authentication.k8s.io/exec
      extension:
        audience: sts.example.com
  name: gke_project_zone_name
contexts:
- context:
    cluster: kind-kind
    user: kind-kind
  name: kind-kind
- context:
    cluster: gke_project_zone_name
    namespace: team-a
    user: gke
  name: gke
current-context: kind-kind
kind: Config
preferences: {}
users:
- name: kind-kind
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t
    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ==
- name: gke
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - --region
      - eu-west-1
      - token
      command: gke-gcloud-auth-plugin
      env:
      - name: AWS_PROFILE
        value: prod
      - name: EMPTY
        value: ""
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following https://example.com/x#y
      interactiveMode: IfAvailable
      provideClusterInfo: false
- name: envtest
  user:
    token: 66b9be9cc773e9be5e197086bd3439c8302907ea5fff19b4
    as: admin
    as-groups:
    - system:masters
    as-user-extra:
      scopes.example.com/x:
      - a
`;

/** The same by hand: indented sequences, comments, quotes, a document start, nulls and empty lists. */
const HAND_WRITTEN = `---
# a kubeconfig by hand
apiVersion: "v1"
kind: 'Config'   # a comment after a quote
clusters:
  - name: dev          # a comment after a plain value
    cluster:
      server: 'https://dev.example:6443'
      certificate-authority: ../ca.crt
  -   name: "with \\"escapes\\" and \\\\ and \\/"
      cluster:
        server: https://it's.example
users:
  - name: dev
    user:
      tokenFile: /var/run/token
      password: 'it''s#not a comment'
      username: a#b
  - name: anonymous
    user:
contexts:
  - name: dev
    context: {cluster: dev, user: dev}
current-context: dev
preferences:
extensions: []
`;

describe('the block YAML reader', () => {
  it("reads kubectl's and hand-written kubeconfigs exactly as the yaml package does", () => {
    for (const text of [
      KUBECTL,
      HAND_WRITTEN.replace(
        'context: {cluster: dev, user: dev}',
        'context:\n      cluster: dev\n      user: dev',
      ),
    ]) {
      const read = parseBlockYaml(text);
      expect(read, text).toBeDefined();
      expect(read?.value).toEqual(full(text));
    }
    for (const text of ['"quoted key": v\n', "'it''s': \"x\"\n", '"": empty\n', '"a\\"b":\n- c\n']) {
      expect(parseBlockYaml(text), text).toEqual({ value: full(text) });
    }
    expect(parseBlockYaml('')).toEqual({ value: full('') });
    expect(parseBlockYaml('# only a comment\n')).toEqual({ value: full('# only a comment\n') });
  });

  it('leaves to the yaml package what it does not read: anchors, flow style, block scalars, numbers...', () => {
    const outside = [
      HAND_WRITTEN, // its flow mapping
      'users:\n- name: u\n  user: &u\n    token: t\n- name: v\n  user: *u\n',
      'a: !!str 1\n',
      'a: |\n  line\n',
      'a: >\n  folded\n',
      'a: [x, y]\n',
      'a: 1\n',
      'a: 0x1F\n',
      'a: 1e5\n',
      'a: 1_000\n',
      'a: 1:20\n',
      'a: .inf\n',
      'a: 2001-12-14\n',
      'a: yes\n',
      'a: off\n',
      'a: True\n',
      'a: NULL\n',
      'a: plain\n  continued\n',
      'a: "two\n  lines"\n',
      'a: "\\x41"\n',
      'a: "open\n',
      "a: 'open\n",
      'a: "x" y\n',
      'a: b: c\n',
      'a: 1\na: 2\n',
      'a:\tb\n',
      'a: b\r\n',
      '\uFEFFa: b\n',
      'a: b\u0000c\n',
      'a: b\u0085c\n',
      'a: b\u2028c\n',
      'a: b\u00A0\n',
      '\u3000a: b\n',
      'a: b\n---\nc: d\n',
      '%YAML 1.2\n---\na: b\n',
      '? a\n: b\n',
      '"open key: v\n',
      '"key" v\n',
      'null: v\n',
      '__proto__: v\n',
      '<<: *x\n',
      'a:\n  b: 1\n c: 2\n',
      Array.from({ length: 70 }, (_, depth) => `${' '.repeat(depth)}k:`).join('\n'),
    ];
    for (const text of outside) expect(parseBlockYaml(text), JSON.stringify(text)).toBeUndefined();
  });

  it('reads what yaml.stringify writes of kubeconfig-shaped values as yaml.parse does, or leaves it', () => {
    // Random kubeconfig-shaped documents in every string style and both sequence layouts: whatever the
    // reader returns must be yaml.parse's value; documents of ordinary strings it must read itself.
    let seed = 24;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const ordinary = [
      'v1',
      'https://127.0.0.1:6443',
      'LS0tLS1CRUdJTiBDRVJU+/==',
      '66b9be9cc773',
      'a#b',
      "it's",
      'say "hi"',
      'back\\slash',
      '',
      ' padded ',
      '1.2.3.4',
      '0x',
      '-v',
      '--region',
      'ünïcödé',
      'a/b.c_d-e',
      'system:masters',
      true,
      false,
      null,
    ];
    const exotic = [
      'a # b',
      'a: b',
      'yes',
      '123',
      '1e3',
      'null',
      'true',
      '~',
      '*star',
      '&amp',
      '!bang',
      '[x]',
      '{y}',
      '|',
      '>',
      '@at',
      '`tick`',
      '%pct',
      'x:',
      ':x',
      '?q',
      'tab\there',
      'line\nbreak',
      'e',
      '- item',
    ];
    const keys = ['name', 'server', 'token', 'as-groups', 'example.com/x', 'current-context', 'a_b'];
    const documentOf = (scalars: readonly unknown[]) => {
      const value = (depth: number): unknown => {
        const roll = random();
        if (depth > 3 || roll < 0.45) return pick(scalars);
        if (roll < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
        return Object.fromEntries(
          Array.from({ length: Math.floor(random() * 4) }, () => [pick(keys), value(depth + 1)]),
        );
      };
      const doc = Object.fromEntries(Array.from({ length: 4 }, () => [pick(keys), value(0)]));
      return stringify(doc, {
        indentSeq: random() < 0.5,
        defaultStringType: pick(['PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE'] as const),
        lineWidth: 0,
      });
    };
    for (let i = 0; i < 300; i++) {
      const text = documentOf(ordinary);
      expect(parseBlockYaml(text), text).toEqual({ value: full(text) });
    }
    let left = 0;
    for (let i = 0; i < 300; i++) {
      const text = documentOf([...ordinary, ...exotic]);
      const read = parseBlockYaml(text);
      if (read === undefined) left++;
      else expect(read.value, text).toEqual(full(text));
    }
    expect(left).toBeGreaterThan(0);
  });
});

describe('YAML kubeconfigs', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'block-yaml-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('read with the block reader and with the yaml package give the same connection', async () => {
    // The same kubeconfig, once as kubectl writes it and once with an anchor, which only yaml reads.
    const plain = [
      'apiVersion: v1',
      'clusters:',
      '- cluster:',
      '    server: https://127.0.0.1:6443',
      '    tls-server-name: api.example',
      '  name: c',
      'users:',
      '- name: u',
      '  user:',
      '    token: "t0k#n"',
      'contexts:',
      '- context:',
      '    cluster: c',
      '    user: u',
      '    namespace: team-a',
      '  name: a',
      'current-context: a',
      '',
    ].join('\n');
    const anchored = plain
      .replace('- context:', '- context: &ctx')
      .replace('current-context: a', 'current-context: a\nx-spare: *ctx');
    expect(parseBlockYaml(plain)).toBeDefined();
    expect(parseBlockYaml(anchored)).toBeUndefined();
    const connections = [];
    for (const [name, text] of [
      ['plain', plain],
      ['anchored', anchored],
    ]) {
      const file = path.join(dir, name!);
      writeFileSync(file, text!);
      const config = loadKubeConfig({ kubeconfig: file, env: {} });
      connections.push({ namespace: config.namespace, ...(await config.connection()) });
    }
    expect(connections[0]).toEqual(connections[1]);
    expect(connections[0]).toMatchObject({
      server: 'https://127.0.0.1:6443',
      namespace: 'team-a',
      tls: { servername: 'api.example' },
      headers: { Authorization: 'Bearer t0k#n' },
    });
  });

  it('YAML the block reader leaves and yaml refuses is an error with a hint, as before', () => {
    expect(() => parseKubeconfig('clusters:\n- name: a\n  name: b\n', '/k/config')).toThrow(
      /kubeconfig \/k\/config is not valid YAML: .*\nhint: /,
    );
  });
});
