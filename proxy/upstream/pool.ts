/**
 * The pool's public face: what the rest of proxy/ may use of it (the Pool,
 * and the types its events carry). The pool and its parts live in pool/;
 * outside upstream/, only this module and pool/options.ts are imported
 * (eslint.config.js).
 */
export { Pool } from './pool/pool.js';
export type { RaceResult } from './pool/race.js';
