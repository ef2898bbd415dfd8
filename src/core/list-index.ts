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
  private readonly lists: (readonly T[] | undefined)[] = new Array(INDEX_SLOTS).fill(undefined);
  private readonly indexes: (I | undefined)[] = new Array(INDEX_SLOTS).fill(undefined);
  /** The slot to reuse next when none is free. */
  private next = 0;

  constructor(private readonly build: (list: readonly T[]) => I) {}

  /** The index of `list`, built when it has none. */
  of(list: readonly T[]): I {
    const at = this.slotOf(list);
    if (at >= 0) return this.indexes[at] as I;
    const index = this.build(list);
    this.give(list, index);
    return index;
  }

  /** Takes the index of `list` away from it (`undefined` when it has none), to update for the list after it. */
  take(list: readonly T[]): I | undefined {
    const at = this.slotOf(list);
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
    let at = this.slotOf(list);
    if (at < 0) at = this.lists.indexOf(undefined);
    if (at < 0) {
      at = this.next;
      this.next = (this.next + 1) % INDEX_SLOTS;
    }
    this.lists[at] = list;
    this.indexes[at] = index;
  }

  private slotOf(list: readonly T[]): number {
    for (let i = 0; i < INDEX_SLOTS; i += 1) if (this.lists[i] === list) return i;
    return -1;
  }
}

/** Lists whose index each {@link ListIndexes} holds at most (threads reduced in turn, branches of one state). */
export const INDEX_SLOTS = 4;
