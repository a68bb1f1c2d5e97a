/**
 * The types every action and every piece of step machinery shares: the runner seam (`ActionIO`),
 * the options of a step's `run()`, and the shape of input declarations. Types only, so any
 * module can import them without creating a cycle.
 */
import type { z } from 'zod'

export type ActionIO = {
  /** An input's value, trimmed; '' when absent (the runner has already applied action.yml defaults). */
  getInput(name: string): string
  /**
   * Sets an output, scrubbed of the registered secrets. With `secret: true` the value is itself
   * a secret handed to the next step (an API key): it is masked in the runner's logs first,
   * then written as is.
   */
  setOutput(name: string, value: string, options?: { secret?: boolean }): void
  /** Masks the value in the runner's logs and in everything written through this seam. */
  setSecret(value: string): void
  /** State for the post step of the same action. */
  saveState(name: string, value: string): void
  getState(name: string): string
  debug(message: string): void
  info(message: string): void
  warning(message: string): void
  /** A notice annotation (something to know, nothing wrong); a plain log line where absent. */
  notice?(message: string): void
  error(message: string): void
  startGroup(name: string): void
  endGroup(): void
  /** Appends Markdown to the job summary. */
  appendSummary(markdown: string): Promise<void>
  /**
   * The text scrubbed as everything written through this seam is (registered secrets, credentials
   * in URLs): for what leaves the step by another road, such as a PR comment or a check run.
   */
  scrub(text: string): string
  /** Marks the step failed (exit code 1) with this message. */
  setFailed(message: string): void
  /** The environment: RUNNER_TEMP, GITHUB_WORKSPACE, the GITHUB_* context. */
  env: Record<string, string | undefined>
}

export type RunOptions = {
  /** Aborts the step (the entry wires SIGINT/SIGTERM to it). */
  signal?: AbortSignal
}

/** The module of one action: what the bundle's entry (./index.ts) loads and runs. */
export type ActionModule = { run: (io: ActionIO, options: RunOptions) => Promise<void> }

// --- Input declarations (their values and parsing: ./steps/inputs.ts) ------------------------

type Base<T> = { schema: z.ZodType<T>; secret?: boolean }
export type RequiredInput<T> = Base<T> & { kind: 'required' }
export type OptionalInput<T> = Base<T> & { kind: 'optional' }
export type DefaultedInput<T> = Base<T> & { kind: 'default'; default: string }
export type InputSpec = RequiredInput<unknown> | OptionalInput<unknown> | DefaultedInput<unknown>
export type InputSpecs = Record<string, InputSpec>

type ValueOf<S> =
  S extends OptionalInput<infer T>
    ? T | undefined
    : S extends RequiredInput<infer T> | DefaultedInput<infer T>
      ? T
      : never
export type InputValues<S extends InputSpecs> = { [K in keyof S]: ValueOf<S[K]> }

export type CrossCheck<S extends InputSpecs> = (context: {
  /** Parsed values; undefined where the input is absent or did not parse. */
  values: Partial<InputValues<S>>
  /** The inputs as given, defaults applied. */
  raw: Record<keyof S & string, string>
  /** Whether the input parsed (an absent optional input counts as parsed). */
  parsed: (name: keyof S & string) => boolean
  problem: (input: keyof S & string, message: string) => void
}) => void
