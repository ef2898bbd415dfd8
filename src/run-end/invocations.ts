/** What the guards saw of each graph invocation (a run, held weakly, and a graph in it), for the step budget. */
import { modelCallFitsAfter, type StackShape, toolTurnFits } from "./budget.js";
import { perInvocation, type StepReading } from "./steps.js";

/** Where a turn point (the model call, or a guard hook right after it) was seen in one invocation. */
interface PointRecord {
  first: number;
  last: number;
  /** The longest gap between two sightings (a turn), once two were seen. */
  turn: number | undefined;
}

interface InvocationRecord {
  points: Map<string, PointRecord>;
  /** A guard node seen before any turn point (a resumed hook, a tool call): the invocation began by then. */
  before: number | undefined;
  /** A guard's `afterModel` sent the run back to the model for its wrap-up. */
  wrapUp: boolean;
}

const runs = new WeakMap<object, Map<string, InvocationRecord>>();

function invocationAt(at: StepReading): InvocationRecord {
  return perInvocation(runs, at, () => ({ points: new Map(), before: undefined, wrapUp: false }));
}

/** The step budget of one guard: the stack shape it knows, the turns it measured, its turn point's sightings. */
export class StepBudget {
  /** The longest turn measured in any invocation (a graph's shape does not change between invocations). */
  #learned = 0;
  /** A shape given by the user (`guardStack`): exact, never measured over. */
  #declared: StackShape | undefined;

  /** @param point - `"model"` (createAgent's model call, shared by the pack's middleware) or a hook's own name. */
  constructor(
    readonly point: string,
    private readonly prior: StackShape,
  ) {}

  /** Gives the stack's whole shape (`guardStack`): it replaces the estimates. */
  declare(shape: StackShape): void {
    this.#declared = { ...shape };
  }

  /** The shape to budget with: declared, or the prior with the longest turn measured. */
  shape(extra: StackShape = { around: 0, edges: 0 }, at?: StepReading): StackShape {
    if (this.#declared !== undefined) return this.#declared;
    const seen = at === undefined ? undefined : runs.get(at.run)?.get(at.graph)?.points.get(this.point);
    const measured = Math.max(this.#learned, seen?.turn ?? 0) - 2;
    return {
      around: Math.max(this.prior.around + extra.around, measured),
      edges: this.prior.edges + extra.edges,
    };
  }

  /** Records a sighting of the turn point at `at` (seen more than once in one step, it counts once). */
  saw(at: StepReading): void {
    const invocation = invocationAt(at);
    const seen = invocation.points.get(this.point);
    if (seen === undefined) {
      invocation.points.set(this.point, { first: at.step, last: at.step, turn: undefined });
      return;
    }
    if (at.step <= seen.last) return;
    seen.turn = Math.max(seen.turn ?? 0, at.step - seen.last);
    seen.last = at.step;
    this.#learned = Math.max(this.#learned, seen.turn);
  }

  /** Records a guard node that is not the turn point: one seen before the first turn point means a resume there. */
  sawNode(at: StepReading): void {
    const invocation = invocationAt(at);
    if (invocation.points.size === 0 && invocation.before === undefined) invocation.before = at.step;
  }

  /** Notes (or, with `false`, forgets) that the invocation's next model call is a wrap-up a guard asked for. */
  wrapUpAsked(at: StepReading, asked: boolean): void {
    invocationAt(at).wrapUp = asked;
  }

  wrapUpPending(at: StepReading): boolean {
    return runs.get(at.run)?.get(at.graph)?.wrapUp === true;
  }

  toolTurnFits(at: StepReading, extra?: StackShape): boolean {
    return toolTurnFits(at.step, this.#first(at, extra), at.limit, this.shape(extra, at));
  }

  modelCallFitsAfter(at: StepReading, extra?: StackShape): boolean {
    return modelCallFitsAfter(at.step, this.#first(at, extra), at.limit, this.shape(extra, at));
  }

  /** Where the count starts: the first sighting, or on a resume one turn's hooks before the first guard node. */
  #first(at: StepReading, extra?: StackShape): number {
    const invocation = invocationAt(at);
    const first = invocation.points.get(this.point)?.first ?? at.step;
    const before = invocation.before;
    return before === undefined ? first : Math.min(first, before - this.shape(extra, at).around);
  }
}
