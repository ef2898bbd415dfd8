/** Lists whose index each {@link ListIndexes} holds at most (threads reduced in turn, branches of one state). */
export const INDEX_SLOTS = 4;

/**
 * Derived indexes of state lists, never checkpointed: the lists are replaced, never changed, so the reducer `take`s an
 * index from a list and `give`s it, updated, to its successor. Bounded slots stand in for a costlier `WeakMap`.
 */
export class ListIndexes<T, I> {
  private readonly lists: (readonly T[] | undefined)[] = new Array(INDEX_SLOTS).fill(undefined);
  private readonly indexes: (I | undefined)[] = new Array(INDEX_SLOTS).fill(undefined);
  private next = 0; // the slot to reuse when none is free

  constructor(private readonly build: (list: readonly T[]) => I) {}

  /** The index of `list`, built when it has none. */
  of(list: readonly T[]): I {
    const at = this.lists.indexOf(list);
    let index = at < 0 ? undefined : this.indexes[at];
    if (index === undefined) {
      index = this.build(list);
      this.give(list, index);
    }
    return index;
  }

  /** Takes the index of `list` away from it (`undefined` when it has none), to update for the list after it. */
  take(list: readonly T[]): I | undefined {
    const at = this.lists.indexOf(list);
    if (at < 0) return undefined;
    const index = this.indexes[at];
    this.lists[at] = undefined;
    this.indexes[at] = undefined;
    return index;
  }

  /** Takes the index of `list` away from it, or builds one it never had (either way no longer `list`'s). */
  takeOrBuild(list: readonly T[]): I {
    return this.take(list) ?? this.build(list);
  }

  /** Gives `list` an index (one taken from the list it replaces, updated). */
  give(list: readonly T[], index: I): void {
    let at = this.lists.indexOf(list);
    if (at < 0) at = this.lists.indexOf(undefined);
    if (at < 0) {
      at = this.next;
      this.next = (this.next + 1) % INDEX_SLOTS;
    }
    this.lists[at] = list;
    this.indexes[at] = index;
  }
}
