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

import { readFileSync } from 'node:fs';
import { loadYaml } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Guestbook } from '../../../../src/api/webapp/v2/guestbook.types.js';
import { convertFrom, convertTo } from '../../../../src/api/webapp/v2/guestbook.conversion.js';

const root = new URL('../../../../', import.meta.url);

function sample(): Guestbook {
  return loadYaml<Guestbook>(readFileSync(new URL('config/samples/webapp_v2_guestbook.yaml', root), 'utf8'));
}

describe('Guestbook v2 conversion', () => {
  it('converts the sample to the hub version v1', () => {
    expect(convertTo(sample()).apiVersion).toBe('webapp.example.com/v1');
  });

  it('round-trips the sample through the hub unchanged', () => {
    expect(convertFrom(convertTo(sample()))).toEqual(sample());
  });
});
