/**
 * The conversion webhook: ConversionReview apiextensions.k8s.io/v1, the counterpart of
 * controller-runtime's `webhook/conversion` with its hub and spokes. One version of a kind is the hub
 * (the storage version, marked `+kubebuilder:storageversion`); every other version is a spoke that
 * converts to and from the hub, so that any two versions convert through it.
 *
 * ```ts
 * const guestbookV2 = convertible(GuestbookV2, {
 *   convertTo: (v2): GuestbookV1 => ({ ...v2, apiVersion: GuestbookV1.apiVersion, spec: { ... } }),
 *   convertFrom: (v1): GuestbookV2Type => ({ ...v1, apiVersion: GuestbookV2.apiVersion, spec: { ... } }),
 * });
 * registerConversion(server, GuestbookV1, [guestbookV2]);
 * ```
 *
 * The converters get copies, so they may change and return them. The server sets `apiVersion` and `kind`
 * on what they return, and the source's `metadata` when they return none; the apiserver refuses converted
 * objects whose metadata changed other than in labels and annotations.
 */
import { deepCopy } from '../internal/deepcopy.js';
import type { ResourceKind } from '../kinds.js';
import type { ReviewStatus } from './admission.js';
import { messages } from './internal/messages.js';
import { CONVERT_PATH } from './paths.js';
import type { WebhookServer } from './server.js';
import type { Answer, Webhook, WebhookContext } from './webhook.js';

export const CONVERSION_API_VERSION = 'apiextensions.k8s.io/v1';

export interface ConversionRequest {
  uid: string;
  /** The version every object is to be converted to, as `webapp.example.com/v1`. */
  desiredAPIVersion: string;
  objects: unknown[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects: unknown[];
  result: ReviewStatus;
}

export interface ConversionReview {
  apiVersion: typeof CONVERSION_API_VERSION;
  kind: 'ConversionReview';
  request?: ConversionRequest;
  response?: ConversionResponse;
}

/** A spoke version: how its objects convert to and from the hub's. */
export interface Convertible<Hub, Spoke> {
  readonly kind: ResourceKind<Spoke>;
  convertTo(spoke: Spoke, context: WebhookContext): Hub | Promise<Hub>;
  convertFrom(hub: Hub, context: WebhookContext): Spoke | Promise<Spoke>;
}

/** Declares the spoke `kind` (one version of the hub's kind) and its conversions. */
export function convertible<Hub, Spoke>(
  kind: ResourceKind<Spoke>,
  converters: Omit<Convertible<Hub, Spoke>, 'kind'>,
): Convertible<Hub, Spoke> {
  return {
    kind,
    convertTo: (spoke, context) => converters.convertTo(spoke, context),
    convertFrom: (hub, context) => converters.convertFrom(hub, context),
  };
}

interface KindConversions {
  hub: ResourceKind<unknown>;
  spokes: Map<string, Convertible<unknown, unknown>>;
}

interface ObjectHead {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: unknown;
}

class ConversionFailure extends Error {
  constructor(
    message: string,
    readonly error?: unknown,
  ) {
    super(message);
  }
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Converts the objects of every registered kind; served at `/convert`. */
export class ConversionWebhook implements Webhook {
  readonly review = { apiVersion: CONVERSION_API_VERSION, kind: 'ConversionReview' };
  private readonly kinds = new Map<string, KindConversions>();

  /**
   * Adds `hub`'s kind, converted through `hub` by `spokes`; a later call for the same hub adds more spokes
   * (the scaffold registers one spoke a line). Returns this webhook.
   */
  add<Hub>(hub: ResourceKind<Hub>, spokes: Convertible<Hub, unknown>[]): this {
    const key = `${hub.group}/${hub.kind}`;
    const known = this.kinds.get(key);
    if (known && known.hub.version !== hub.version) {
      throw new Error(messages.conversionTwoHubs(`${hub.kind}.${hub.group}`, known.hub.version, hub.version));
    }
    const byVersion = known?.spokes ?? new Map<string, Convertible<unknown, unknown>>();
    const versions = new Set(byVersion.keys());
    for (const spoke of spokes) {
      if (spoke.kind.group !== hub.group || spoke.kind.kind !== hub.kind) {
        throw new Error(
          messages.conversionGroupKind(
            `${spoke.kind.kind} ${spoke.kind.apiVersion}`,
            `${hub.kind} ${hub.apiVersion}`,
          ),
        );
      }
      if (spoke.kind.version === hub.version || versions.has(spoke.kind.version)) {
        throw new Error(messages.conversionDuplicate(`${hub.kind} ${spoke.kind.apiVersion}`));
      }
      versions.add(spoke.kind.version);
    }
    // Checked first, added after: a refused call leaves the webhook as it was.
    for (const spoke of spokes) byVersion.set(spoke.kind.version, spoke as Convertible<unknown, unknown>);
    this.kinds.set(key, { hub, spokes: byVersion });
    return this;
  }

  async answer(body: Record<string, unknown>, context: WebhookContext): Promise<Answer> {
    const request = body['request'] as ConversionRequest | undefined;
    if (typeof request !== 'object' || request === null) {
      const message = messages.missingRequest('ConversionReview');
      return { status: 400, body: this.failure(body, 400, message), failure: message };
    }
    if (typeof request.uid !== 'string' || request.uid === '') {
      const message = messages.missingUid('ConversionReview');
      return { status: 400, body: this.failure(body, 400, message), failure: message };
    }
    const logger = context.logger.child({ requestID: request.uid });
    try {
      const objects = Array.isArray(request.objects) ? request.objects : [];
      const converted: unknown[] = [];
      for (const object of objects) {
        converted.push(await this.convert(object, String(request.desiredAPIVersion), { ...context, logger }));
      }
      return {
        body: this.reviewOf({ uid: request.uid, convertedObjects: converted, result: { status: 'Success' } }),
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const cause = error instanceof ConversionFailure ? error.error : error;
      return {
        body: this.failure(body, 0, message),
        failure: message,
        ...(cause !== undefined ? { error: cause } : {}),
      };
    }
  }

  failure(body: Record<string, unknown>, code: number, message: string): ConversionReview {
    const request = body['request'] as Partial<ConversionRequest> | undefined;
    return this.reviewOf({
      uid: typeof request?.uid === 'string' ? request.uid : '',
      convertedObjects: [],
      result: { status: 'Failure', message, ...(code ? { code } : {}) },
    });
  }

  private reviewOf(response: ConversionResponse): ConversionReview {
    return { apiVersion: CONVERSION_API_VERSION, kind: 'ConversionReview', response };
  }

  private async convert(
    object: unknown,
    desiredAPIVersion: string,
    context: WebhookContext,
  ): Promise<unknown> {
    const head = (typeof object === 'object' && object !== null ? object : {}) as ObjectHead;
    const apiVersion = String(head.apiVersion ?? '');
    const kind = String(head.kind ?? '');
    const source = splitApiVersion(apiVersion);
    const target = splitApiVersion(desiredAPIVersion);
    const conversions = this.kinds.get(`${source.group}/${kind}`);
    if (!conversions || target.group !== source.group) {
      throw new ConversionFailure(
        messages.noConversion(`${apiVersion} -> ${desiredAPIVersion}`, kind, this.known()),
      );
    }
    if (source.version === target.version) return object;
    const { hub, spokes } = conversions;
    const spokeOf = (version: string) => {
      const spoke = spokes.get(version);
      if (!spoke)
        throw new ConversionFailure(messages.noConversion(`${source.group}/${version}`, kind, this.known()));
      return spoke;
    };
    const from = source.version === hub.version ? undefined : spokeOf(source.version);
    const to = target.version === hub.version ? undefined : spokeOf(target.version);
    const step = async <T>(what: string, run: () => T | Promise<T>): Promise<T> => {
      try {
        return await run();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ConversionFailure(messages.conversionFailed(`${kind} ${apiVersion}`, what, reason), error);
      }
    };
    let hubObject = deepCopy(object) as ObjectHead;
    if (from) {
      hubObject = (await step(`${kind} ${hub.apiVersion}`, () =>
        from.convertTo(deepCopy(object), context),
      )) as ObjectHead;
      hubObject = {
        ...hubObject,
        apiVersion: hub.apiVersion,
        kind,
        metadata: hubObject.metadata ?? head.metadata,
      };
    }
    let result = hubObject;
    if (to)
      result = (await step(`${kind} ${desiredAPIVersion}`, () =>
        to.convertFrom(hubObject, context),
      )) as ObjectHead;
    return { ...result, apiVersion: desiredAPIVersion, kind, metadata: result.metadata ?? head.metadata };
  }

  private known(): string {
    return (
      [...this.kinds.values()]
        .map(
          ({ hub, spokes }) =>
            `${hub.kind}.${hub.group || 'core'} ${[`${hub.version} (hub)`, ...spokes.keys()].join(', ')}`,
        )
        .join('; ') || 'nothing'
    );
  }
}

/** A conversion webhook for `hub`'s kind: register it at `CONVERT_PATH`, or use registerConversion. */
export function conversion<Hub>(
  hub: ResourceKind<Hub>,
  spokes: Convertible<Hub, unknown>[],
): ConversionWebhook {
  return new ConversionWebhook().add(hub, spokes);
}

/**
 * Adds the conversions of `hub`'s kind to `server`'s conversion webhook at `/convert`, registering it the
 * first time: every CRD of the operator converts through the same path, as kubebuilder's configurations
 * expect.
 */
export function registerConversion<Hub>(
  server: WebhookServer,
  hub: ResourceKind<Hub>,
  spokes: Convertible<Hub, unknown>[],
): void {
  const existing = server.registered(CONVERT_PATH);
  if (existing instanceof ConversionWebhook) {
    existing.add(hub, spokes);
    return;
  }
  server.register(CONVERT_PATH, new ConversionWebhook().add(hub, spokes));
}
