/** The compiler bundle of @ts-morph/common (dist/typescript.js), required without the rest of that package. */
declare module '@ts-morph/common/dist/typescript.js' {
  import { ts } from '@ts-morph/common';
  export = ts;
}
