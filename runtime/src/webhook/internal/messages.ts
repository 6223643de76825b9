/** The webhook server's error texts, in one place. */

export const messages = {
  certificateMissing: (file: string, reason: string, certDir: string) =>
    `webhook server: cannot read ${file}: ${reason}. The serving certificate and key must be in ${certDir} ` +
    '(mount the Secret cert-manager fills there, or set certDir)',
  certificateInvalid: (certDir: string, reason: string) =>
    `webhook server: the certificate and key in ${certDir} do not form a usable pair: ${reason}`,
  duplicatePath: (path: string) => `webhook server: a webhook is already registered at ${path}`,
  invalidPath: (path: string) =>
    `webhook server: invalid webhook path "${path}": expected /segment[/segment...] of letters, digits, - and _`,
  emptyBody: () => 'request body is empty',
  tooLarge: (limit: number) => `request entity is too large; limit is ${limit} bytes`,
  busy: (max: number) => `the webhook server is serving ${max} requests, its maxConcurrentRequests: retry`,
  overBudget: (max: number) =>
    `the webhook server holds ${max} bytes of requests, its maxInFlightBytes: retry`,
  contentType: (contentType: string | undefined) =>
    `contentType=${contentType ?? ''}, expected application/json`,
  malformedJson: (reason: string) => `request body is not valid JSON: ${reason}`,
  wrongReview: (got: string, expected: string) => `expected a ${expected} review, got ${got}`,
  missingRequest: (kind: string) => `the ${kind} has no request`,
  missingUid: (kind: string) => `the ${kind}'s request has no uid`,
  timedOut: (ms: number) => `the webhook did not answer within ${ms} ms`,
  handlerFailed: (reason: string) => `internal error in the webhook: ${reason}`,
  wrongKind: (got: string, expected: string) =>
    `this webhook admits ${expected}, but was called for ${got}: check the rules of the webhook configuration`,
  missingObject: (field: string, operation: string) => `the request has no ${field} for ${operation}`,
  unknownOperation: (operation: string) => `unknown operation "${operation}"`,
  noConversion: (apiVersion: string, kind: string, known: string) =>
    `no conversion for ${kind} ${apiVersion}: this webhook converts ${known}`,
  conversionFailed: (from: string, to: string, reason: string) =>
    `converting ${from} to ${to} failed: ${reason}`,
  conversionDuplicate: (what: string) => `conversion webhook: ${what} is registered twice`,
  conversionTwoHubs: (kind: string, first: string, second: string) =>
    `conversion webhook: ${kind} has one hub, ${first}; it cannot also convert through ${second}`,
  conversionGroupKind: (spoke: string, hub: string) =>
    `conversion webhook: the convertible ${spoke} is not the same group and kind as its hub ${hub}`,
};
