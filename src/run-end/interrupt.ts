/** Asking a person at escalation level 3: the interrupt's payload, the answer's forms, and the call to LangGraph. */
import { interrupt } from "@langchain/langgraph";

/**
 * The value of the interrupt raised at escalation level 3: what a person needs to decide how the agent goes on.
 * Find it in `(await graph.getState(config)).tasks[i].interrupts[j].value`, or in the `__interrupt__` of an
 * `invoke` result.
 *
 * @example
 * ```ts
 * const snapshot = await graph.getState(config);
 * const ask = snapshot.tasks.flatMap((t) => t.interrupts).find((i) => isEscalationInterrupt(i.value))
 *   ?.value as EscalationInterrupt;
 * console.log(ask.question, ask.tool, ask.attempts);
 * ```
 */
export interface EscalationInterrupt {
  /** Always `"langgraph-guards/escalation"` (see {@link isEscalationInterrupt}). */
  type: "langgraph-guards/escalation";
  /** Always 3: asking a person is escalation level 3. */
  level: 3;
  /** What the agent asks the person. */
  question: string;
  /** The tool that keeps being repeated, and its arguments. */
  tool: string;
  /** The repeated call's arguments. */
  args: unknown;
  /** Strikes so far: blocked repeats in this thread, this one included. */
  attempts: number;
  /** The previous result of the repeated call, when recorded. */
  previousResult?:
    | {
        /** Whether that call succeeded. */
        ok: boolean;
        /** Its result text. */
        text: string;
      }
    | undefined;
  /** Every pending tool call of the response (none of them runs). */
  calls: {
    /** The tool-call id. */
    id?: string | undefined;
    /** The tool's name. */
    name: string;
    /** The call's arguments. */
    args: unknown;
  }[];
  /** How to answer: `Command({ resume })` with one of {@link EscalationResume}. */
  howToAnswer: string;
}

/**
 * A person's answer at level 3, passed as `new Command({ resume })`: a text for the model (the strikes stay), or an
 * object whose `action` also says what happens next: `"continue"` (default) gives `answer` to the model, `"reset"`
 * gives it and forgets the strikes, `"end"` ends the run (with `answer` as the reason).
 *
 * @example
 * ```ts
 * await graph.invoke(new Command({ resume: { answer: "Install pygame first.", action: "reset" } }), config);
 * ```
 */
export type EscalationResume =
  | string
  | {
      /** The text for the model (with `"end"`: the reason the run ended). */
      answer?: string;
      /** What happens next: `"continue"` (default), `"reset"` (also forget the strikes), `"end"` (end the run). */
      action?: "continue" | "reset" | "end";
    };

/**
 * Whether an interrupt value is the escalation's.
 *
 * @example
 * ```ts
 * result.__interrupt__?.some((i) => isEscalationInterrupt(i.value)); // a person is asked
 * ```
 */
export function isEscalationInterrupt(value: unknown): value is EscalationInterrupt {
  return (
    typeof value === "object" && value !== null && (value as { type?: unknown }).type === "langgraph-guards/escalation"
  );
}

/** Asks a person with `interrupt()` and reads any form of their answer; `undefined` without a checkpointer. */
export function askPerson(
  payload: EscalationInterrupt,
): { answer: string; action: "continue" | "reset" | "end" } | undefined {
  const asked = interruptIfResumable(payload);
  if (asked === undefined) return undefined;
  const value = asked.answer;
  if (typeof value === "string") return { answer: value, action: "continue" };
  if (typeof value === "object" && value !== null) {
    const { answer, action } = value as { answer?: unknown; action?: unknown };
    const act = action === "reset" || action === "end" ? action : "continue";
    return { answer: typeof answer === "string" ? answer : "", action: act };
  }
  return { answer: value === undefined || value === null ? "" : String(value), action: "continue" };
}

/**
 * LangGraph's `interrupt()` with the answer boxed, or undefined without a checkpointer: LangGraph has no public way to
 * ask for one, but `interrupt()` checks it first and throws `MISSING_CHECKPOINTER`.
 */
export function interruptIfResumable(payload: unknown): { answer: unknown } | undefined {
  try {
    return { answer: interrupt(payload) };
  } catch (error) {
    if ((error as { lc_error_code?: unknown } | null)?.lc_error_code === "MISSING_CHECKPOINTER") return undefined;
    throw error;
  }
}
