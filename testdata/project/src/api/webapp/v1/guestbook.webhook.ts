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
 * Webhooks for Guestbook: the API server calls the admission webhooks on every create and update of a
 * Guestbook, as the +kubebuilder:webhook markers say (`npm run manifests` turns them into
 * config/webhook/manifests.yaml), and the conversion webhook when a client uses another version
 * of Guestbook than the stored one.
 */
import type { Manager } from '@kubesmith/runtime';
import { GuestbookKind } from './guestbook.types.js';
import * as runtime from '@kubesmith/runtime';
import type { Guestbook } from './guestbook.types.js';
import { registerConversion } from '@kubesmith/runtime';
import { guestbookV2Conversion } from '../v2/guestbook.conversion.js';
// +kubesmith:scaffold:imports

// +kubebuilder:webhook:path=/mutate-webapp-example-com-v1-guestbook,mutating=true,failurePolicy=fail,sideEffects=None,groups=webapp.example.com,resources=guestbooks,verbs=create;update,versions=v1,name=mguestbook-v1.kb.io,admissionReviewVersions=v1

/** defaultGuestbook sets the default values of a Guestbook, in place, before it is validated and stored. */
export function defaultGuestbook(guestbook: Guestbook): void {
  // TODO(user): fill in your defaulting logic. For example: guestbook.spec.replicas ??= 1;
  guestbook.metadata ??= {};
}

// +kubebuilder:webhook:path=/validate-webapp-example-com-v1-guestbook,mutating=false,failurePolicy=fail,sideEffects=None,groups=webapp.example.com,resources=guestbooks,verbs=create;update,versions=v1,name=vguestbook-v1.kb.io,admissionReviewVersions=v1

/** The label that names the application: selectors rely on it, so it may not change once set. */
export const APP_LABEL = 'app.kubernetes.io/name';

/** The checks of every Guestbook, on create and on update: one field error per problem. */
function checkGuestbook(guestbook: Guestbook): runtime.FieldError[] {
  const errors: runtime.FieldError[] = [];
  // TODO(user): fill in your validation logic. For example, Kubernetes label values are at most 63 long:
  const name = guestbook.metadata?.name ?? '';
  if (name.length > 63) errors.push(runtime.fieldError.tooLong('metadata.name', 63));
  return errors;
}

/**
 * guestbookValidator checks a Guestbook before the API server stores it: validateCreate and validateUpdate
 * on every create and update (the marker's verbs), validateDelete when `delete` joins them. A problem is
 * thrown as a ValidationError of field errors, answered with a message that names each field
 * (`spec.x: Invalid value: ...`); warnings go back to the client, and kubectl prints them.
 */
export const guestbookValidator = {
  validateCreate(guestbook: Guestbook): runtime.ValidationResult {
    const errors = checkGuestbook(guestbook);
    if (errors.length > 0) throw new runtime.ValidationError(errors);
    return { warnings: [] };
  },

  validateUpdate(guestbook: Guestbook, old: Guestbook): runtime.ValidationResult {
    const errors = checkGuestbook(guestbook);
    // `old` is the stored object: compare the two to refuse changes of immutable fields.
    const label = APP_LABEL;
    const before = old.metadata?.labels?.[label];
    if (before !== undefined && guestbook.metadata?.labels?.[label] !== before) {
      errors.push(runtime.fieldError.forbidden(`metadata.labels[${label}]`, 'field is immutable'));
    }
    if (errors.length > 0) throw new runtime.ValidationError(errors);
    return { warnings: [] };
  },

  validateDelete(): runtime.ValidationResult {
    // TODO(user): checks before a deletion, called once the marker's verbs include delete.
    return { warnings: [] };
  },
} satisfies runtime.Validator<Guestbook>;

// +kubesmith:scaffold:webhooks

/** setupGuestbookWebhookWithManager registers the Guestbook webhooks with the manager's webhook server. */
export function setupGuestbookWebhookWithManager(mgr: Manager): void {
  mgr.webhookServer.register(
    runtime.mutatePath(GuestbookKind),
    runtime.defaulting(GuestbookKind, { default: defaultGuestbook }),
  );

  mgr.webhookServer.register(
    runtime.validatePath(GuestbookKind),
    runtime.validating(GuestbookKind, guestbookValidator),
  );

  registerConversion(mgr.webhookServer, GuestbookKind, [guestbookV2Conversion]);
  // +kubesmith:scaffold:register
}
