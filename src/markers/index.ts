/** Comment markers: the grammar, the typed registry, and collection from TypeScript sources. */
export * from './diagnostics.js';
export * from './grammar.js';
export * from './effects.js';
export * from './registry.js';
export * from './collect.js';
export * from './marker-index.js';
