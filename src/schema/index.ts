/** TypeScript types -> structural OpenAPI v3 schemas for CRDs (DESIGN §4). */
export * from './types.js';
export * from './apply.js';
export * from './known.js';
export * from './build.js';
export * from './structural.js';
export * from './checks.js';
