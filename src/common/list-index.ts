/**
 * A derived index of a list held in the guards' state (the repetition window, the answers kept for result dedupe),
 * cached per list object and never stored in a checkpoint. The state's lists are replaced, never changed, so an
 * index stays right for its list; the channel reducer `take`s it from a list, updates it in place for the list that
 * replaces it and `give`s it to that one, and a list without one (fresh from a checkpoint, a second branch from the
 * same state, or one whose slot was reused) builds it once in `of`. Being derived, it never changes a decision, only
 * its cost.
 *
 * The indexes are held in a few slots (the lists used last), not in a `WeakMap`: an insert into a `WeakMap` costs
 * microseconds on the tool node's path every turn, and its entries cost the garbage collector. A slot holds its list
 * until the list is taken or the slot is reused, so at most {@link INDEX_SLOTS} lists are kept alive by it.
 */
export class ListIndexes<T, I> {
  private readonly slots = new IdentitySlots<readonly T[], I>(INDEX_SLOTS);

  constructor(private readonly build: (list: readonly T[]) => I) {}

  /** The index of `list`, built when it has none. */
  of(list: readonly T[]): I {
    let index = this.slots.get(list);
    if (index === undefined) {
      index = this.build(list);
      this.slots.set(list, index);
    }
    return index;
  }

  /** Takes the index of `list` away from it (`undefined` when it has none), to update for the list after it. */
  take(list: readonly T[]): I | undefined {
    return this.slots.take(list);
  }

  /** Takes the index of `list` away from it, or builds one it never had (either way no longer `list`'s). */
  takeOrBuild(list: readonly T[]): I {
    return this.take(list) ?? this.build(list);
  }

  /** Gives `list` an index (one taken from the list it replaces, updated). */
  give(list: readonly T[], index: I): void {
    this.slots.set(list, index);
  }
}

/** Lists whose index each {@link ListIndexes} holds at most (threads reduced in turn, branches of one state). */
export const INDEX_SLOTS = 4;

/**
 * A value for each of the few objects used last, found by the object's identity: a bounded stand-in for a `WeakMap`
 * on the tool node's path (an insert into a `WeakMap` costs microseconds every turn). `set` reuses the key's slot, a
 * free one, or the oldest; each slot holds its key and value alive until it is taken or reused.
 *
 * @example
 * ```ts
 * const slots = new IdentitySlots<object, string>(4);
 * slots.set(message, "h1");
 * slots.get(message); // "h1" (until three other keys have been set)
 * ```
 */
export class IdentitySlots<K, V> {
  private readonly keys: (K | undefined)[];
  private readonly values: (V | undefined)[];
  /** The slot to reuse next when none is free. */
  private next = 0;

  constructor(private readonly size: number) {
    this.keys = new Array(size).fill(undefined);
    this.values = new Array(size).fill(undefined);
  }

  /** The value of `key`, if it has a slot. */
  get(key: K): V | undefined {
    const at = this.slotOf(key);
    return at < 0 ? undefined : this.values[at];
  }

  /** The value of `key`, its slot freed. */
  take(key: K): V | undefined {
    const at = this.slotOf(key);
    if (at < 0) return undefined;
    const value = this.values[at];
    this.keys[at] = undefined;
    this.values[at] = undefined;
    return value;
  }

  /** Gives `key` the value (in its own slot, a free one, or the oldest). */
  set(key: K, value: V): void {
    let at = this.slotOf(key);
    if (at < 0) at = this.keys.indexOf(undefined);
    if (at < 0) {
      at = this.next;
      this.next = (this.next + 1) % this.size;
    }
    this.keys[at] = key;
    this.values[at] = value;
  }

  private slotOf(key: K): number {
    for (let i = 0; i < this.size; i += 1) if (this.keys[i] === key) return i;
    return -1;
  }
}
