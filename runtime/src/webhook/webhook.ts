/**
 * What a webhook is to the server that serves it: the one contract between the webhook server (server.ts)
 * and the kinds of webhook (admission.ts, conversion.ts), so that the server knows none of them.
 */
import type { Logger } from '../logger.js';

/** What a webhook receives besides the review. */
export interface WebhookContext {
  /** Aborted when the request times out or the caller goes away: pass it to slow calls. */
  signal: AbortSignal;
  /** The server's logger, with the webhook's path (and, for admission, the request's uid and object). */
  logger: Logger;
}

/** A webhook's answer to one review. */
export interface Answer {
  /** HTTP status. Default: 200 (a review whose response says what went wrong is still a 200). */
  status?: number;
  /** The review sent back. */
  body: unknown;
  /** Set when the answer reports a failure: the server logs it, once. */
  failure?: string;
  /** The error behind the failure, logged with its stack. */
  error?: unknown;
}

/** What the server calls: `defaulting(...)`, `validating(...)` and `conversion(...)` make them. */
export interface Webhook {
  /** The apiVersion and kind of the reviews it answers; others are refused with a 400. */
  readonly review: { readonly apiVersion: string; readonly kind: string };
  /** Answers a review (already checked to be of `review`'s apiVersion and kind). Never throws. */
  answer(body: Record<string, unknown>, context: WebhookContext): Promise<Answer>;
  /** The review to send when the request cannot be answered: malformed, too large, timed out. */
  failure(body: Record<string, unknown>, code: number, message: string, reason?: string): unknown;
}
