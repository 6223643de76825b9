/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

import { describe, expect, it } from 'vitest';
import type { Guestbook } from '../../../../src/api/webapp/v1/guestbook.types.js';
import * as webhooks from '../../../../src/api/webapp/v1/guestbook.webhook.js';

function sample(): Guestbook {
  return {
    apiVersion: 'webapp.example.com/v1',
    kind: 'Guestbook',
    metadata: { name: 'guestbook-sample', namespace: 'default' },
    spec: {},
  };
}

describe('Guestbook webhooks', () => {
  it('defaulting leaves a complete Guestbook as it is', () => {
    const guestbook = sample();
    webhooks.defaultGuestbook(guestbook);
    expect(guestbook).toEqual(sample());
  });

  it('validation accepts a valid Guestbook', () => {
    expect(webhooks.guestbookValidator.validateCreate(sample())).toEqual({ warnings: [] });
  });

  it('validation refuses a name longer than 63 characters, naming the field', () => {
    const guestbook = sample();
    guestbook.metadata = { ...guestbook.metadata, name: 'x'.repeat(64) };
    expect(() => webhooks.guestbookValidator.validateCreate(guestbook)).toThrow(/metadata\.name: Too long/);
  });

  it('validation refuses an update that changes the app label', () => {
    const label = webhooks.APP_LABEL;
    const old = sample();
    old.metadata = { ...old.metadata, labels: { [label]: 'a' } };
    const changed = sample();
    changed.metadata = { ...changed.metadata, labels: { [label]: 'b' } };
    expect(() => webhooks.guestbookValidator.validateUpdate(changed, old)).toThrow(
      /metadata\.labels\[app\.kubernetes\.io\/name\]: Forbidden: field is immutable/,
    );
    expect(webhooks.guestbookValidator.validateUpdate(old, old)).toEqual({ warnings: [] });
  });

  // +kubesmith:scaffold:webhooktests
});
