/**
 * The Step base: what every action step does whichever service it talks to. Outputs set as soon
 * as their value is known; one closing report (the job summary, then the failure message that
 * fails the step) however the step ends; the work run so that a throw becomes that report; and
 * what must be closed, closed after it. Each kind of step says what goes in the summary's table
 * (`rows`) and what a failure means for its service (`describe`).
 */
import type { ActionIO } from '../types.ts'
import { writeSummary } from './io.ts'
import { OutputWriter } from './outputs.ts'
import { STATE } from './state.ts'
import { docsBase, renderSummary, runUrl, type Ending, type SummaryValue } from './summary.ts'

export type StepOptions = {
  /** The step's name in the summary title: "Prove", "Pack", "Task", ... */
  action: string
  signal: AbortSignal
  /** Ran on the emulator: said in the summary's title and footer. */
  emulated?: boolean | undefined
  now?: () => number
}

export abstract class Step<Options extends StepOptions = StepOptions, OutputName extends string = string> {
  readonly io: ActionIO
  readonly options: Options
  readonly outputs: OutputWriter<OutputName>
  readonly started: number
  /** Rows of the summary's table that the action adds (after the step's own). */
  extraRows: [string, SummaryValue][] = []
  /** Markdown blocks shown after the table (a batch's or a bucket's per-query table). */
  sections: string[] = []
  readonly #closers: (() => Promise<void>)[] = []
  #remembered = false

  constructor(io: ActionIO, options: Options, outputs: OutputWriter<OutputName> = new OutputWriter<OutputName>(io)) {
    this.io = io
    this.options = options
    this.outputs = outputs
    this.started = this.now()
  }

  now(): number {
    return (this.options.now ?? Date.now)()
  }

  /** The summary's table, in order; empty values are left out when rendered. */
  rows(): [string, SummaryValue][] {
    return this.extraRows
  }

  /** What a failure means and what to do next, in this step's service's words. */
  protected abstract describe(error: unknown): Ending

  /** Outputs that depend on how the step ended, set before the summary is written. */
  protected ending(_end: Ending): void {}

  /** The rendered summary, for a step that adds to it (the task steps' MMR table). */
  protected summary(markdown: string): string {
    return markdown
  }

  /** The closing report: the job summary, then (unless it passed) the step marked failed. */
  async report(end: Ending): Promise<void> {
    this.ending(end)
    // Every action has `error-reason`: the step's own when it set one, else the failure message.
    if (end.failure && (this.outputs as OutputWriter<string>).get('error-reason') === undefined) {
      ;(this.outputs as OutputWriter<string>).set({ 'error-reason': end.failure })
    }
    const markdown = renderSummary({
      action: this.options.action,
      outcome: end.outcome,
      headline: end.headline,
      rows: this.rows(),
      sections: this.sections,
      problems: end.problems,
      nextSteps: end.nextSteps,
      snippet: end.snippet,
      runUrl: runUrl(this.io.env),
      docsBase: docsBase(this.io.env),
      emulated: this.options.emulated,
    })
    await writeSummary(this.io, this.summary(markdown))
    this.reported()
    if (end.failure) this.io.setFailed(end.failure)
  }

  /** After the summary is written (the post step reads that it was). */
  protected reported(): void {
    if (this.#remembered) this.io.saveState(STATE.reported, 'true')
  }

  /**
   * What the post step says if this step is killed before it reports (the runner's post step
   * runs even then): what was started on the service and how to follow it. Call it as soon as
   * the service has answered with an id.
   */
  remember(subject: string, followUp: string): void {
    this.#remembered = true
    this.io.saveState(STATE.action, this.options.action)
    this.io.saveState(STATE.subject, subject)
    this.io.saveState(STATE.followUp, followUp)
  }

  /** Any error: the outputs known so far, a summary saying what failed and what to do, failed. */
  async fail(error: unknown): Promise<void> {
    await this.report(this.describe(error))
  }

  /** A failure after the report (the decommitment after a passed gate): what the check run concludes with. */
  laterFailure: { message: string; cancelled: boolean } | undefined

  /**
   * The step fails after it reported (a later part of it, the decommitment after a passed gate,
   * failed or was cancelled): `error-reason`, the failure, and what the check run concludes.
   */
  failAfterReport(message: string, cancelled = false): void {
    this.laterFailure ??= { message, cancelled }
    ;(this.outputs as OutputWriter<string>).set({ 'error-reason': message })
    this.io.setFailed(message)
  }

  /** Something to close once the step has reported (a client's connections, an emulator). */
  onClose(close: () => Promise<void>): void {
    this.#closers.push(close)
  }

  /**
   * Runs the step's work: whatever it throws becomes the failure report; then what was
   * registered with onClose is closed, however it ended. Resolves whether the work finished.
   */
  async run(work: () => Promise<void>): Promise<boolean> {
    try {
      await work()
      return true
    } catch (error) {
      await this.fail(error)
      return false
    } finally {
      for (const close of this.#closers.splice(0)) await close().catch(() => {})
    }
  }
}
