/**
 * A derived index of a list held in the guards' state (the repetition window, the answers kept for result dedupe),
 * cached per list object and never stored in a checkpoint. The state's lists are replaced, never changed, so an
 * index stays right for its list; the channel reducer `take`s it from a list, updates it in place for the list that
 * replaces it and `give`s it to that one, and a list without one (fresh from a checkpoint, or a second branch from
 * the same state) builds it once in `of`. Being derived, it never changes a decision, only its cost.
 */
export class ListIndexes<T, I> {
  private readonly byList = new WeakMap<readonly T[], I>();

  constructor(private readonly build: (list: readonly T[]) => I) {}

  /** The index of `list`, built when it has none. */
  of(list: readonly T[]): I {
    let index = this.byList.get(list);
    if (index === undefined) {
      index = this.build(list);
      this.byList.set(list, index);
    }
    return index;
  }

  /** Takes the index of `list` away from it (`undefined` when it has none), to update for the list after it. */
  take(list: readonly T[]): I | undefined {
    const index = this.byList.get(list);
    if (index !== undefined) this.byList.delete(list);
    return index;
  }

  /** Takes the index of `list` away from it, or builds one it never had (either way no longer `list`'s). */
  takeOrBuild(list: readonly T[]): I {
    return this.take(list) ?? this.build(list);
  }

  /** Gives `list` an index (one taken from the list it replaces, updated). */
  give(list: readonly T[], index: I): void {
    this.byList.set(list, index);
  }
}
