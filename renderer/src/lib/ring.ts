/**
 * A fixed-capacity ring buffer that keeps the newest `capacity` items.
 *
 * Items are addressed two ways:
 *   - by position, 0 = oldest still held … size-1 = newest (`at`);
 *   - by absolute index, the count of items ever pushed before it
 *     (`atAbsolute`), which stays valid while the item is held, so derived
 *     indexes (a filtered view) need not be rebuilt when old items fall out.
 *
 *   absolute:  [ evicted … | first … total-1 ]
 *   storage:   slot = absolute % capacity
 */
export class RingBuffer<T> {
  readonly capacity: number;
  readonly #slots: (T | undefined)[];
  /** Items ever pushed; the newest has absolute index total-1. */
  #total = 0;
  /** Items below this absolute index were dropped (dropAll); `total` stays monotonic. */
  #floor = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a whole number ≥ 1, got ${capacity}`);
    this.capacity = capacity;
    this.#slots = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return Math.min(this.#total - this.#floor, this.capacity);
  }

  /** Items ever pushed (monotonic). */
  get total(): number {
    return this.#total;
  }

  /** Absolute index of the oldest item still held. */
  get first(): number {
    return this.#total - this.size;
  }

  push(item: T): void {
    this.#slots[this.#total % this.capacity] = item;
    this.#total++;
  }

  pushAll(items: Iterable<T>): void {
    for (const item of items) this.push(item);
  }

  /** 0 = oldest held. */
  at(position: number): T | undefined {
    if (position < 0 || position >= this.size) return undefined;
    return this.#slots[(this.first + position) % this.capacity];
  }

  atAbsolute(index: number): T | undefined {
    if (index < this.first || index >= this.#total) return undefined;
    return this.#slots[index % this.capacity];
  }

  newest(): T | undefined {
    return this.#total === 0 ? undefined : this.#slots[(this.#total - 1) % this.capacity];
  }

  clear(): void {
    this.#slots.fill(undefined);
    this.#total = 0;
    this.#floor = 0;
  }

  /**
   * Drops every item held but keeps `total` (absolute indices stay valid
   * and monotonic, so derived indexes just see everything fall out).
   */
  dropAll(): void {
    this.#slots.fill(undefined);
    this.#floor = this.#total;
  }

  /** Oldest to newest. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.first; i < this.#total; i++) yield this.#slots[i % this.capacity] as T;
  }

  toArray(): T[] {
    return [...this];
  }
}
