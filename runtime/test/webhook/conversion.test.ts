import { describe, expect, it } from 'vitest';
import { groupVersion } from '../../src/kinds.js';
import { conversion, convertible, type ConversionReview } from '../../src/webhook/conversion.js';
import type { Webhook } from '../../src/webhook/webhook.js';
import { memoryLogger } from './helpers.js';

interface V1 {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { replicas: number; image: string };
}
interface V2 {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { scale: { replicas: number }; containerImage: string };
}
interface V3 {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { size: string };
}

const GuestbookV1 = groupVersion('webapp.example.com', 'v1').kind<V1>('Guestbook', { plural: 'guestbooks' });
const GuestbookV2 = groupVersion('webapp.example.com', 'v2').kind<V2>('Guestbook', { plural: 'guestbooks' });
const GuestbookV3 = groupVersion('webapp.example.com', 'v3').kind<V3>('Guestbook', { plural: 'guestbooks' });

const v2 = convertible<V1, V2>(GuestbookV2, {
  convertTo: (src) => ({
    ...src,
    spec: { replicas: src.spec.scale.replicas, image: src.spec.containerImage },
  }),
  convertFrom: (hub) => ({
    ...hub,
    spec: { scale: { replicas: hub.spec.replicas }, containerImage: hub.spec.image },
  }),
});
const v3 = convertible<V1, V3>(GuestbookV3, {
  convertTo: () => {
    throw new Error('v3 size cannot be mapped');
  },
  convertFrom: ({ metadata, spec }) => ({
    apiVersion: '',
    kind: '',
    metadata,
    spec: { size: spec.replicas > 3 ? 'L' : 'S' },
  }),
});
const webhook = conversion(GuestbookV1, [v2, v3]);

const inV1: V1 = {
  apiVersion: 'webapp.example.com/v1',
  kind: 'Guestbook',
  metadata: { name: 'g' },
  spec: { replicas: 5, image: 'nginx' },
};
const inV2: V2 = {
  apiVersion: 'webapp.example.com/v2',
  kind: 'Guestbook',
  metadata: { name: 'g' },
  spec: { scale: { replicas: 5 }, containerImage: 'nginx' },
};

async function convert(target: Webhook, desiredAPIVersion: string, objects: unknown[]) {
  const { logger } = memoryLogger();
  const answer = await target.answer(
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'c0ffee', desiredAPIVersion, objects },
    },
    { signal: new AbortController().signal, logger },
  );
  return { ...answer, review: answer.body as ConversionReview };
}

describe('conversion', () => {
  it('converts a spoke to the hub and back, each object of the request, uid echoed', async () => {
    const toHub = await convert(webhook, 'webapp.example.com/v1', [inV2, inV2]);
    expect(toHub.review).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: { uid: 'c0ffee', convertedObjects: [inV1, inV1], result: { status: 'Success' } },
    });
    const fromHub = await convert(webhook, 'webapp.example.com/v2', [inV1]);
    expect(fromHub.review.response?.convertedObjects).toEqual([inV2]);
  });

  it('converts spoke to spoke through the hub, setting apiVersion and kind', async () => {
    const { review } = await convert(webhook, 'webapp.example.com/v3', [inV2]);
    expect(review.response?.convertedObjects).toEqual([
      {
        apiVersion: 'webapp.example.com/v3',
        kind: 'Guestbook',
        metadata: { name: 'g' },
        spec: { size: 'L' },
      },
    ]);
  });

  it('returns an object already in the desired version as it is', async () => {
    const { review } = await convert(webhook, 'webapp.example.com/v1', [inV1]);
    expect(review.response?.convertedObjects).toEqual([inV1]);
  });

  it('fails the review with a message when a converter throws or a version is unknown', async () => {
    const thrown = await convert(webhook, 'webapp.example.com/v1', [
      { ...inV1, apiVersion: 'webapp.example.com/v3', spec: { size: 'S' } },
    ]);
    expect(thrown.review.response).toEqual({
      uid: 'c0ffee',
      convertedObjects: [],
      result: {
        status: 'Failure',
        message:
          'converting Guestbook webapp.example.com/v3 to Guestbook webapp.example.com/v1 failed: v3 size cannot be mapped',
      },
    });
    expect(thrown.failure).toBeDefined();
    expect(thrown.error).toBeInstanceOf(Error);
    const unknown = await convert(webhook, 'webapp.example.com/v9', [inV1]);
    expect(unknown.review.response?.result).toEqual({
      status: 'Failure',
      message:
        'no conversion for Guestbook webapp.example.com/v9: this webhook converts Guestbook.webapp.example.com v1 (hub), v2, v3',
    });
    const otherKind = await convert(webhook, 'apps/v1', [{ apiVersion: 'apps/v1beta1', kind: 'Deployment' }]);
    expect(otherKind.review.response?.result.message).toMatch(
      /^no conversion for Deployment apps\/v1beta1 -> apps\/v1/,
    );
  });

  it('answers a review without a request with a 400', async () => {
    const { logger } = memoryLogger();
    const answer = await webhook.answer(
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' },
      { signal: new AbortController().signal, logger },
    );
    expect(answer.status).toBe(400);
    expect((answer.body as ConversionReview).response?.result.message).toBe(
      'the ConversionReview has no request',
    );
  });

  it('refuses spokes of another kind, or a version twice, when registered', () => {
    const Other = groupVersion('webapp.example.com', 'v2').kind('Visitor', { plural: 'visitors' });
    expect(() =>
      conversion(GuestbookV1, [
        convertible<V1, V1>(Other as never, { convertTo: (x) => x, convertFrom: (x) => x }),
      ]),
    ).toThrow(
      'conversion webhook: the convertible Visitor webapp.example.com/v2 is not the same group and kind as its hub Guestbook webapp.example.com/v1',
    );
    expect(() => conversion(GuestbookV1, [v2, v2])).toThrow(/registered twice/);
    expect(() => webhook.add(GuestbookV1, [v2])).toThrow(/registered twice/);
    expect(() => webhook.add(GuestbookV2, [])).toThrow(
      'conversion webhook: Guestbook.webapp.example.com has one hub, v1; it cannot also convert through v2',
    );
  });

  it('takes more spokes for a hub in a later call, as the scaffold registers them', async () => {
    const split = conversion(GuestbookV1, [v2]).add(GuestbookV1, [v3]);
    const { review } = await convert(split, 'webapp.example.com/v3', [inV2]);
    expect(review.response?.convertedObjects).toMatchObject([{ spec: { size: 'L' } }]);
    expect(() => split.add(GuestbookV1, [v3])).toThrow(/registered twice/);
  });
});
