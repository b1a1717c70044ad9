// Types for scripts/node-runtime.mjs (imported by the TypeScript tests and benches).
export declare const NODE_RUNTIME: { readonly version: string; readonly integrity: string };
export declare const RUNTIME_CACHE: string;
export declare function nodeTarball(cacheDir?: string, log?: (msg: string) => void): string;
export declare function unpackedNode(cacheDir?: string, log?: (msg: string) => void): string;
