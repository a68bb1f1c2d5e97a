/**
 * Runs one job of a workflow of this repository the way the runner does, on this machine: each
 * `uses: ./<action>` step through the runner harness (the committed bundle, `INPUT_*`, file
 * commands: test/helpers/run-action.ts), each `run:` step in `bash -eo pipefail` with its
 * `env:`, `${{ }}` expressions of the contexts a job uses (`env`, `steps.<id>.outputs`,
 * `steps.<id>.outcome`, `github.run_id`, `runner.temp`), `continue-on-error` and `if: always()`.
 * Steps that only prepare a hosted runner (checkout, setup-node, npm ci) and those the caller
 * replaces (starting a service it runs itself) are skipped. Anything else this runner does not
 * understand fails the test rather than being guessed.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'yaml'
import { parseFileCommand, REPO_ROOT, runAction } from './run-action.ts'

type Step = {
  id?: string
  name?: string
  uses?: string
  run?: string
  with?: Record<string, unknown>
  env?: Record<string, unknown>
  if?: string
  'continue-on-error'?: boolean
}
type Job = { env?: Record<string, unknown>; steps: Step[] }

export type StepResult = {
  step: string
  outcome: 'success' | 'failure' | 'skipped'
  outputs: Record<string, string>
  log: string
}

export type JobOptions = {
  /** Replaces the job's `env:` values (an emulator started by the test instead of a fixed port). */
  env?: Record<string, string>
  /** Steps not to run, by name. */
  skip?: string[]
  /** The workspace (checked-out repository): a scratch folder with what the job reads. */
  workspace: string
}

const PREPARES_RUNNER = [/^actions\/checkout@/, /^actions\/setup-node@/]

export function readJob(workflow: string, job: string): Job {
  const parsed = parse(readFileSync(join(REPO_ROOT, workflow), 'utf8')) as { jobs: Record<string, Job> }
  const found = parsed.jobs[job]
  if (!found) throw new Error(`${workflow} has no job ${job}`)
  return found
}

export async function runJob(workflow: string, jobName: string, options: JobOptions): Promise<StepResult[]> {
  const job = readJob(workflow, jobName)
  const runnerTemp = mkdtempSync(join(tmpdir(), 'runner-temp-'))
  const steps: Record<string, { outputs: Record<string, string>; outcome: string }> = {}
  const env: Record<string, string> = {}
  const evaluate = (value: unknown): string =>
    String(value).replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_match, expression: string) => {
      let m: RegExpExecArray | null
      if ((m = /^env\.([A-Za-z_][\w]*)$/.exec(expression))) return env[m[1]!] ?? ''
      if ((m = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expression))) return steps[m[1]!]?.outputs[m[2]!] ?? ''
      if ((m = /^steps\.([\w-]+)\.outcome$/.exec(expression))) return steps[m[1]!]?.outcome ?? ''
      if (expression === 'github.run_id') return '4242'
      if (expression === 'runner.temp') return runnerTemp
      throw new Error(`${workflow}: the local runner does not evaluate \${{ ${expression} }}`)
    })
  for (const [key, value] of Object.entries(job.env ?? {})) env[key] = options.env?.[key] ?? evaluate(value)

  const results: StepResult[] = []
  let failed = false
  for (const step of job.steps) {
    const label = step.name ?? step.id ?? step.uses ?? step.run!.split('\n')[0]!
    const prepares =
      (step.uses && PREPARES_RUNNER.some((pattern) => pattern.test(step.uses!))) || step.run?.trim() === 'npm ci'
    if (prepares || options.skip?.includes(label)) {
      results.push({ step: label, outcome: 'skipped', outputs: {}, log: '' })
      continue
    }
    if (step.if !== undefined && step.if !== 'always()')
      throw new Error(`${label}: the local runner does not evaluate if: ${step.if}`)
    if (failed && step.if !== 'always()') {
      results.push({ step: label, outcome: 'skipped', outputs: {}, log: '' })
      continue
    }
    let result: StepResult
    if (step.uses) {
      if (!step.uses.startsWith('./'))
        throw new Error(`${label}: only this repository's actions run locally, not ${step.uses}`)
      const inputs = Object.fromEntries(Object.entries(step.with ?? {}).map(([key, value]) => [key, evaluate(value)]))
      const run = await runAction(step.uses.replace(/^\.\/?/, '').replace(/\/$/, ''), {
        inputs,
        workspace: options.workspace,
        runnerTemp,
        env,
      })
      result = {
        step: label,
        outcome: run.code === 0 ? 'success' : 'failure',
        outputs: run.outputs,
        log: run.stdout + run.stderr,
      }
    } else if (step.run !== undefined) {
      const outputFile = join(mkdtempSync(join(runnerTemp, 'step-')), 'output')
      writeFileSync(outputFile, '')
      const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([key, value]) => [key, evaluate(value)]))
      const script = evaluate(step.run)
      const { code, log } = await bash(script, {
        cwd: options.workspace,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? runnerTemp,
          ...env,
          ...stepEnv,
          GITHUB_OUTPUT: outputFile,
          RUNNER_TEMP: runnerTemp,
          GITHUB_WORKSPACE: options.workspace,
          GITHUB_ACTIONS: 'true',
        },
      })
      result = {
        step: label,
        outcome: code === 0 ? 'success' : 'failure',
        outputs: parseFileCommand(readFileSync(outputFile, 'utf8')),
        log,
      }
    } else {
      throw new Error(`${label}: neither uses nor run`)
    }
    results.push(result)
    if (step.id) steps[step.id] = { outputs: result.outputs, outcome: result.outcome }
    if (result.outcome === 'failure' && !step['continue-on-error']) failed = true
  }
  return results
}

function bash(
  script: string,
  options: { cwd: string; env: Record<string, string> },
): Promise<{ code: number | null; log: string }> {
  return new Promise((resolve, reject) => {
    // GitHub's default shell on Linux: bash --noprofile --norc -eo pipefail {0}
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let log = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (log += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, log }))
  })
}
