/**
 * Every factory takes at most 12 top-level options (rare settings live in named groups). Each list below must name
 * every option of its type, no more (the type checker holds it to that), so a new option shows up here.
 */
import { describe, expect, it } from "vitest";
import type { DuplicateHandlerOptions } from "../../src/classes/index.js";
import type {
  EscalationHookOptions,
  EscalationNodeOptions,
  FileToolsOptions,
  GuardedToolNodeOptions,
  LoopDetectNodeOptions,
  LoopDetectOptions,
  RepeatQueryGuardOptions,
  RepeatQueryRouterOptions,
  SafetyOptions,
  ToolGuardOptions,
} from "../../src/index.js";
import type { GuardMiddlewareOptions, SafetyLimitsOptions } from "../../src/middleware/index.js";
import type { ReplayOptions } from "../../src/replay/index.js";

/** The option names of `T`, checked by the compiler to be all of them and nothing else. */
function optionsOf<T>() {
  return <const K extends Record<keyof T, true>>(keys: K & Record<Exclude<keyof K, keyof T>, never>): string[] =>
    Object.keys(keys);
}

/** The seed's limits, top-level in every loop guard. */
const LOOP_LIMITS = {
  loopThreshold: true,
  maxIterations: true,
  maxRuntimeMs: true,
  maxCost: true,
  maxTokens: true,
  price: true,
  maxConsecutiveFailures: true,
  wrapUp: true,
  ask: true,
} as const;

const FACTORIES: Record<string, string[]> = {
  "GuardedToolNode (and resolveToolGuardOptions)": optionsOf<GuardedToolNodeOptions>()({
    repetitionThreshold: true,
    windowSize: true,
    tools: true,
    mode: true,
    ignoreArgs: true,
    rules: true,
    feedback: true,
    memory: true,
    escalation: true,
    name: true,
    tags: true,
    handleToolErrors: true,
  }),
  "the tool-call guard options alone": optionsOf<ToolGuardOptions>()({
    repetitionThreshold: true,
    windowSize: true,
    tools: true,
    mode: true,
    ignoreArgs: true,
    rules: true,
    feedback: true,
    memory: true,
    escalation: true,
  }),
  guardMiddleware: optionsOf<GuardMiddlewareOptions>()({
    repetitionThreshold: true,
    windowSize: true,
    tools: true,
    mode: true,
    ignoreArgs: true,
    rules: true,
    feedback: true,
    memory: true,
    escalation: true,
    interrupt: true,
    agentTools: true,
    wrapUp: true,
  }),
  replayGuards: optionsOf<ReplayOptions>()({
    repetitionThreshold: true,
    windowSize: true,
    tools: true,
    mode: true,
    ignoreArgs: true,
    rules: true,
    feedback: true,
    memory: true,
    escalation: true,
    hook: true,
    agentTools: true,
    loop: true,
  }),
  escalationHook: optionsOf<EscalationHookOptions>()({ interrupt: true, wrapUp: true }),
  escalationNode: optionsOf<EscalationNodeOptions>()({
    interrupt: true,
    wrapUp: true,
    model: true,
    next: true,
    done: true,
    exit: true,
  }),
  repeatQueryRouter: optionsOf<RepeatQueryRouterOptions>()({
    on_ok: true,
    on_repeat: true,
    query_parser: true,
    getQuery: true,
  }),
  repeatQueryGuard: optionsOf<RepeatQueryGuardOptions<never, string, string, string>>()({
    on_ok: true,
    on_repeat: true,
    query_parser: true,
    getQuery: true,
    id: true,
    hint: true,
  }),
  "SafetyGuard (the seed's class)": optionsOf<SafetyOptions>()({
    loopThreshold: true,
    maxRecentOutputs: true,
    maxIterations: true,
    maxRuntimeMs: true,
    maxCost: true,
    maxTokens: true,
    price: true,
    maxConsecutiveFailures: true,
    minOutputLength: true,
    scorer: true,
    logger: true,
    clock: true,
  }),
  "loopDetectHook and loopDetectMiddleware": optionsOf<LoopDetectOptions>()({
    ...LOOP_LIMITS,
    turns: true,
    feedback: true,
  }),
  loopDetectNode: optionsOf<LoopDetectNodeOptions>()({ ...LOOP_LIMITS, turns: true, feedback: true, routes: true }),
  safetyLimitsMiddleware: optionsOf<SafetyLimitsOptions>()({
    maxIterations: true,
    maxRuntimeMs: true,
    maxCost: true,
    maxTokens: true,
    price: true,
    maxConsecutiveFailures: true,
    wrapUp: true,
    ask: true,
    turns: true,
    feedback: true,
  }),
  "createFileTools and fileToolsMiddleware": optionsOf<FileToolsOptions>()({
    root: true,
    allowCommands: true,
    denyWrites: true,
    allowGitWrites: true,
    ignored: true,
    refuseHardLinks: true,
    clock: true,
    cache: true,
    commands: true,
    limits: true,
    feedback: true,
  }),
  "DuplicateHandler (the seed's class)": optionsOf<DuplicateHandlerOptions>()({
    keys: true,
    levelStrikes: true,
    contentThreshold: true,
    acknowledgmentPatterns: true,
    retryPatterns: true,
    clock: true,
    historyLimit: true,
  }),
};

describe("factories' options", () => {
  it.each(Object.entries(FACTORIES))("%s takes at most 12 top-level options", (_name, keys) => {
    expect(keys.length).toBeLessThanOrEqual(12);
  });
});
