// dns-packet's type and class tables, which @types/dns-packet leaves out.
// Ambient (no imports here) so they declare the modules rather than augment them.

declare module 'dns-packet/types.js' {
  /** The mnemonic of a type number, or `UNKNOWN_<n>`. */
  export function toString(type: number): string;
  const types: { toString(type: number): string };
  export default types;
}

declare module 'dns-packet/classes.js' {
  /** The mnemonic of a class number, or `UNKNOWN_<n>`. */
  export function toString(klass: number): string;
  const classes: { toString(klass: number): string };
  export default classes;
}
