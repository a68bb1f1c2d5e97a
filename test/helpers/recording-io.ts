import { redact, SecretRedactor } from '../../src/core/redact.ts'
import type { ActionIO } from '../../src/action/types.ts'

/**
 * An ActionIO that records what a step would hand the runner, for tests that call an action's
 * `run()` in-process. With `scrub`, every text is scrubbed of the registered secrets as coreIO
 * does, so "the secret never appears" checks see what the runner would.
 */
export class RecordingIO implements ActionIO {
  inputs: Record<string, string>
  outputs: Record<string, string> = {}
  /** Output names in the order they were set. */
  outputOrder: string[] = []
  /** Every call that matters for masking, in order: `secret:<value>` and `output:<name>[:secret]`. */
  calls: string[] = []
  logs: string[] = []
  summary = ''
  failed: string | undefined
  secrets: string[] = []
  state: Record<string, string> = {}
  env: Record<string, string | undefined> = {}
  readonly #redactor = new SecretRedactor()
  readonly #scrubbing: boolean

  constructor(inputs: Record<string, string>, options: { scrub?: boolean } = {}) {
    this.inputs = inputs
    this.#scrubbing = options.scrub ?? false
  }

  #scrub = (text: string) => (this.#scrubbing ? redact(text, this.#redactor) : text)
  getInput = (name: string) => (this.inputs[name] ?? '').trim()
  setOutput = (name: string, value: string, options?: { secret?: boolean }) => {
    this.outputs[name] = this.#scrub(value)
    this.outputOrder.push(name)
    this.calls.push(`output:${name}${options?.secret ? ':secret' : ''}`)
  }
  setSecret = (value: string) => {
    if (!value) return
    this.#redactor.add(value)
    this.secrets.push(value)
    this.calls.push(`secret:${value}`)
  }
  saveState = (name: string, value: string) => void (this.state[name] = this.#scrub(value))
  getState = (name: string) => this.state[name] ?? ''
  debug = (message: string) => void this.logs.push(`debug: ${this.#scrub(message)}`)
  info = (message: string) => void this.logs.push(this.#scrub(message))
  warning = (message: string) => void this.logs.push(`warning: ${this.#scrub(message)}`)
  error = (message: string) => void this.logs.push(`error: ${this.#scrub(message)}`)
  startGroup = (name: string) => void this.logs.push(`::group::${this.#scrub(name)}`)
  endGroup = () => void this.logs.push('::endgroup::')
  appendSummary = async (markdown: string) => void (this.summary += this.#scrub(markdown))
  scrub = (text: string) => this.#scrub(text)
  setFailed = (message: string) => void (this.failed = this.#scrub(message))

  /** Everything that left the step, for "the secret never appears" checks. */
  everything(): string {
    return [
      JSON.stringify(this.outputs),
      JSON.stringify(this.state),
      this.logs.join('\n'),
      this.summary,
      this.failed ?? '',
    ].join('\n')
  }
}
