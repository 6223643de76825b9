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

/**
 * Conversion of Guestbook between v2 (a spoke) and v1 (the hub, the storage version).
 * The API server calls the conversion webhook whenever a client reads or writes Guestbook in a version
 * other than the stored one. Every spoke converts to and from the hub, so any two versions convert
 * through it. The conversions get copies: change and return them as you like.
 */
import * as runtime from '@kubesmith/runtime';
import type { Guestbook as GuestbookHub } from '../v1/guestbook.types.js';
import { GuestbookKind, type Guestbook } from './guestbook.types.js';

/** convertTo converts a v2 Guestbook to the hub version, v1. */
export function convertTo(src: Guestbook): GuestbookHub {
  // TODO(user): map the fields that differ between the versions. While the two versions' types agree,
  // copying is enough; when they part, TypeScript points at every field to map here.
  return { ...src, apiVersion: 'webapp.example.com/v1', spec: { ...src.spec } };
}

/** convertFrom converts a hub Guestbook (v1) to v2. */
export function convertFrom(hub: GuestbookHub): Guestbook {
  // TODO(user): the inverse of convertTo; a round trip must give back what it was given.
  return { ...hub, apiVersion: 'webapp.example.com/v2', spec: { ...hub.spec } };
}

/** The conversions of Guestbook v2, registered with the hub by setupGuestbookWebhookWithManager. */
export const guestbookV2Conversion = runtime.convertible<GuestbookHub, Guestbook>(GuestbookKind, {
  convertTo,
  convertFrom,
});
