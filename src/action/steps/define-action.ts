/**
 * The opening every action shares, written once: the abort signal, the secrets masked before
 * anything can print them, the inputs parsed (every problem at once) and, when they do not
 * parse, the step's failure report; then the action's own work, whose throws become that
 * report too. An action file is its inputs, its step and its work.
 */
import type { ActionIO, CrossCheck, InputSpecs, InputValues, RunOptions } from '../types.ts'
import { requestBudgetFor } from '../../core/budget.ts'
import { systemClock } from '../../core/runtime.ts'
import { parseInputs } from './inputs.ts'
import type { Step } from './step.ts'

export type ActionContext<S extends InputSpecs, St extends Step> = {
  io: ActionIO
  signal: AbortSignal
  inputs: InputValues<S>
  step: St
}

export type ActionDefinition<S extends InputSpecs, St extends Step> = {
  inputs: S
  /** Checks between inputs (one needs another), run after each input's own check. */
  crossCheck?: CrossCheck<S> | undefined
  /**
   * Masks what else must never be printed, after every input declared `secret: true` is masked
   * (its derived forms: a private key with and without 0x, the keys inside an RPC URL).
   */
  secrets?: (io: ActionIO) => void
  /** The step that reports; `inputs` is undefined when they did not parse. */
  step: (io: ActionIO, signal: AbortSignal, inputs: InputValues<S> | undefined) => St
  work: (context: ActionContext<S, St>) => Promise<void>
}

/** The action's `run(io, options)`: never throws; every ending is reported by the step. */
export function defineAction<S extends InputSpecs, St extends Step>(
  definition: ActionDefinition<S, St>,
): (io: ActionIO, options?: RunOptions) => Promise<void> {
  return async (io, options = {}) => {
    const signal = options.signal ?? new AbortController().signal
    // Before anything else can print or send them: every input declared secret, by the spec
    // itself, so an action cannot forget one; then what the action derives from them.
    for (const [name, spec] of Object.entries(definition.inputs)) if (spec.secret) io.setSecret(io.getInput(name))
    definition.secrets?.(io)
    let inputs: InputValues<S>
    try {
      inputs = parseInputs(io, definition.inputs, definition.crossCheck)
    } catch (error) {
      await definition.step(io, signal, undefined).fail(error)
      return
    }
    // One request budget for the process: every wait of the step shares it (src/core/budget.ts).
    const rate = (inputs as Record<string, unknown>)['max-requests-per-second']
    if (typeof rate === 'number') requestBudgetFor(systemClock).configure(rate)
    const step = definition.step(io, signal, inputs)
    await step.run(() => definition.work({ io, signal, inputs, step }))
  }
}
