/** Lists whose index each {@link ListIndexes} holds at most (threads reduced in turn, branches of one state). */
export const INDEX_SLOTS = 4;

/**
 * A derived index of a list held in the guards' state (the repetition window, the answers kept for result dedupe),
 * never stored in a checkpoint. The state's lists are replaced, never changed, so an index stays right for its list:
 * the channel reducer `take`s it from a list, updates it for the list that replaces it and `give`s it to that one; a
 * list without one (fresh from a checkpoint, a second branch of one state, its slot reused) builds it once in `of`.
 * Being derived, it never changes a decision, only its cost. The indexes are held in {@link INDEX_SLOTS} slots found
 * by the list's identity (a free one, else the oldest is reused): a bounded stand-in for a `WeakMap`, whose inserts
 * cost the tool node's path every turn.
 *
 * @example
 * ```ts
 * const keys = new ListIndexes<CallRecord, Set<string>>((list) => new Set(list.map((c) => c.key)));
 * keys.of(window).has(key);
 * ```
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
