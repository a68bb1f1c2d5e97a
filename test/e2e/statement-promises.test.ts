import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as runAction } from '../../src/action/actions/main.ts'
import { ProvingClient, proveStatements, silentLogger, type StatementRequest } from '../../src/index.ts'
import { type PlanRow, planStatements } from '../../src/pipeline/statement/index.ts'
import { runCli } from '../helpers/cli.ts'
import { KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { generatedPie } from '../helpers/example-pie.ts'
import { RecordingIO } from '../helpers/recording-io.ts'

/**
 * The product's promises about a statement, each stated once and checked on every host (the CLI
 * as a process, the root action as the runner runs it, the library's proveStatements) and every
 * path (one PIE, several, a PIE directory, the general submission), generated from the two
 * tables below, not written per path. Every count is the emulator's own (its submissions), never
 * a host's word.
 *
 * - Pay once: a run stopped after it paid (no wait) and run again (the action: "Re-run jobs", a
 *   new RUNNER_TEMP, so its journal is gone) creates no second query for any PIE, and passes.
 * - The wrong program is refused before paying: nothing is created, the run fails.
 * - A green gate means proven: a record whose facts are not the PIE's fails the run; with an
 *   on-chain check whose RPC nothing answers, the run fails (the CLI has no on-chain flags).
 * - Interrupted at any stage (prepared, decided, submitted, waiting), a re-run pays once in all.
 */

type Fixture = { zip: string; dir: string }
type Path = { name: string; general: boolean; subjects: (pies: Fixture[]) => string[]; count: number }

const PATHS: Path[] = [
  { name: 'one PIE', general: false, count: 1, subjects: ([a]) => [a!.zip] },
  { name: 'several PIEs', general: false, count: 2, subjects: ([a, b]) => [a!.zip, b!.zip] },
  { name: 'a PIE directory', general: false, count: 1, subjects: ([a]) => [a!.dir] },
  { name: 'the general submission', general: true, count: 1, subjects: ([a]) => [a!.zip] },
]

type RunInput = {
  subjects: string[]
  general: boolean
  wait: boolean
  /** One per cell: the journal's folder (CLI, library), the run's id (action). */
  cell: string
  attempt: number
  expectedProgramHash?: string | undefined
  onchainRpc?: string | undefined
  /** Stop the run when it reaches this stage. */
  stopAt?: Stage | undefined
  /** A general submission's given dedup id. */
  dedupId?: string | undefined
}
type RunResult = { passed: boolean; detail: string }
type Host = {
  name: 'CLI' | 'action' | 'library'
  onchain: boolean
  inProcess: boolean
  run: (input: RunInput) => Promise<RunResult>
  /** The plan of the same run (--dry-run, `dry-run: true`, planStatements): read only. */
  plan: (input: RunInput) => Promise<PlanRow[]>
}

type Stage = 'prepared' | 'decided' | 'submitted' | 'waiting'
const STAGES: Stage[] = ['prepared', 'decided', 'submitted', 'waiting']

let emulator: TestEmulator
let root: string
let seed = 700
/** Fresh PIEs for each cell: what an earlier cell proved is never this cell's to reuse. */
const fresh = (count: number): Promise<Fixture[]> =>
  Promise.all(Array.from({ length: count }, () => generatedPie({ seed: seed++ })))
const created = async (): Promise<number> => (await emulator.control('GET', '/state')).counters.submissions

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY], timing: { receivedMs: 0, stepMs: 40 } })
  root = await mkdtemp(join(tmpdir(), 'statement-promises-'))
})
afterAll(async () => {
  await emulator.close()
  await rm(root, { recursive: true, force: true })
})

const HOSTS: Host[] = [
  {
    name: 'CLI',
    onchain: false,
    inProcess: false,
    async run(input) {
      const result = await runCli(['prove', ...input.subjects, '--json', ...cliFlags(input)], { env: cliEnv(input) })
      return { passed: result.code === 0, detail: `exit ${result.code}\n${result.stderr}` }
    },
    async plan(input) {
      const result = await runCli(['prove', ...input.subjects, '--json', '--dry-run', ...cliFlags(input)], {
        env: cliEnv(input),
      })
      return JSON.parse(result.stdout) as PlanRow[]
    },
  },
  {
    name: 'action',
    onchain: true,
    inProcess: true,
    async plan(input) {
      const io = await actionIO({ ...input, wait: true }, { 'dry-run': 'true' })
      await runAction(io)
      return JSON.parse(io.outputs.plan ?? '[]') as PlanRow[]
    },
    async run(input) {
      const io = await actionIO(input)
      const controller = new AbortController()
      if (input.stopAt) stopOnLine(io, controller, input.stopAt)
      await runAction(io, { signal: controller.signal })
      return { passed: io.failed === undefined, detail: `${io.failed ?? 'passed'}\n${io.logs.join('\n')}` }
    },
  },
  {
    name: 'library',
    onchain: true,
    inProcess: true,
    async plan(input) {
      return planStatements(libraryRequest(input), {
        client: new ProvingClient({ baseUrl: emulator.url, apiKey: KEY, logger: silentLogger }),
        logger: silentLogger,
      })
    },
    async run(input) {
      const controller = new AbortController()
      const request = libraryRequest(input)
      const client = new ProvingClient({ baseUrl: emulator.url, apiKey: KEY, logger: silentLogger })
      const stopAt = input.stopAt
      const outcomes = await proveStatements(request, {
        client,
        logger: silentLogger,
        signal: controller.signal,
        hooks: {
          onEvent: (event) => {
            if (stopAt && event.type === stopAt) controller.abort(new Error('stopped'))
          },
          aroundWait: (_, __, wait) => {
            if (stopAt === 'waiting') setTimeout(() => controller.abort(new Error('stopped')), 5)
            return wait(() => {})
          },
        },
      })
      return {
        passed: outcomes.every((outcome) => outcome.passed),
        detail: outcomes
          .map(
            (outcome) =>
              `${outcome.ending}: ${String(outcome.error ?? outcome.refusals.map((refusal) => refusal.message))}`,
          )
          .join('\n'),
      }
    },
  },
]

/** The CLI's flags for a run, and its environment: the cell's own journal. */
function cliFlags(input: RunInput): string[] {
  return [
    ...(input.wait ? ['--wait'] : []),
    ...(input.general ? ['--result', 'PROOF_VERIFICATION_ON_L2'] : []),
    ...(input.expectedProgramHash ? ['--expected-program-hash', input.expectedProgramHash] : []),
    ...(input.dedupId ? ['--dedup-id', input.dedupId] : []),
  ]
}
const cliEnv = (input: RunInput) => ({
  PROVING_BASE_URL: emulator.url,
  PROVING_API_KEY: KEY,
  PROVING_JOURNAL_DIR: join(root, input.cell),
})

/** The root action's inputs for a run, and its runner: a RUNNER_TEMP of each attempt's own, as on a runner (an earlier attempt's journal is gone). */
async function actionIO(input: RunInput, extra: Record<string, string> = {}): Promise<RecordingIO> {
  const io = new RecordingIO({
    pie: input.subjects.join('\n'),
    'base-url': emulator.url,
    'api-key': KEY,
    wait: String(input.wait),
    'timeout-minutes': '1',
    ...(input.general ? { result: 'PROOF_VERIFICATION_ON_L2' } : {}),
    ...(input.expectedProgramHash ? { 'expected-program-hash': input.expectedProgramHash } : {}),
    ...(input.dedupId ? { 'dedup-id': input.dedupId } : {}),
    ...(input.onchainRpc
      ? { 'verify-onchain': 'starknet', 'starknet-rpc-url': input.onchainRpc, 'onchain-timeout-minutes': '1' }
      : {}),
    ...extra,
  })
  io.env = {
    RUNNER_TEMP: await mkdtemp(join(root, 'runner-temp-')),
    GITHUB_REPOSITORY: 'acme/widgets',
    GITHUB_WORKFLOW: 'release',
    GITHUB_JOB: 'prove',
    GITHUB_RUN_ID: input.cell,
    GITHUB_RUN_ATTEMPT: String(input.attempt),
  }
  return io
}

/** The library's request for a run: the cell's own journal. */
function libraryRequest(input: RunInput): StatementRequest {
  return {
    subjects: input.subjects.map((path) => ({ kind: 'pie', path })),
    endpoint: input.general
      ? {
          kind: 'general',
          layout: 'auto',
          mockFactHash: false,
          fields: { result: 'PROOF_VERIFICATION_ON_L2', dedupId: input.dedupId },
        }
      : { kind: 'l2', layout: 'auto', prover: 'svc_sharp', mockFactHash: false },
    policy: {
      wait: input.wait,
      timeoutMs: 60_000,
      concurrency: 4,
      gate: { allowMockedFact: false, expectedProgramHash: input.expectedProgramHash, verifyFacts: true },
      reuse: { mode: 'auto' },
      journal: { dir: join(root, input.cell), forceNew: false },
      onchain: input.onchainRpc
        ? {
            mode: 'starknet',
            timeoutMs: 60_000,
            starknetRpcUrl: input.onchainRpc,
            expected: { securityBits: 96 },
            allowInsecureHttp: false,
          }
        : undefined,
    },
  }
}

/** The action's lines (info, debug or a group's title) that mark each stage: its log is what a test of the runner can watch. */
const STAGE_LINES: Record<Stage, RegExp> = {
  prepared: /Validated /,
  decided: /No earlier query reused|Reused query/,
  submitted: /Submitted: query|Following query/,
  waiting: /Waiting for query/,
}

function stopOnLine(io: RecordingIO, controller: AbortController, stage: Stage): void {
  for (const method of ['info', 'debug', 'startGroup'] as const) {
    const write = io[method].bind(io)
    io[method] = (line: string) => {
      write(line)
      if (STAGE_LINES[stage].test(line)) controller.abort(new Error('stopped'))
    }
  }
}

/** A port on this machine that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

let cells = 0
const cellId = () => `cell-${++cells}`

describe.each(HOSTS)('$name', (host) => {
  describe.each(PATHS)('$name', (path) => {
    it('pays once: a run stopped after it paid, run again, creates nothing more, and passes', async () => {
      const subjects = path.subjects(await fresh(path.count))
      const cell = cellId()
      const before = await created()
      // The plan, read only: each PIE would be paid for once.
      const plan = await host.plan({ subjects, general: path.general, wait: false, cell, attempt: 1 })
      expect(plan.map((row) => row.decision)).toEqual(subjects.map(() => 'submit'))
      expect(await created()).toBe(before)
      const first = await host.run({ subjects, general: path.general, wait: false, cell, attempt: 1 })
      expect(first.passed, first.detail).toBe(true)
      // The run did what its plan said: one query per 'submit'.
      expect((await created()) - before).toBe(plan.filter((row) => row.decision === 'submit').length)
      // Its re-run plans to pay for nothing: each PIE's query is followed or reused.
      const replan = await host.plan({ subjects, general: path.general, wait: true, cell, attempt: 2 })
      expect(
        replan.map((row) => row.decision).filter((decision) => decision === 'submit' || decision === 'refuse'),
        JSON.stringify(replan),
      ).toEqual([])
      expect(
        replan.every((row) => row.queryId !== undefined),
        JSON.stringify(replan),
      ).toBe(true)
      const again = await host.run({ subjects, general: path.general, wait: true, cell, attempt: 2 })
      expect(again.passed, again.detail).toBe(true)
      expect((await created()) - before, again.detail).toBe(path.count)
    })

    it('refuses the wrong program before paying', async () => {
      const subjects = path.subjects(await fresh(path.count))
      const before = await created()
      const planned = await host.plan({
        subjects,
        general: path.general,
        wait: true,
        cell: cellId(),
        attempt: 1,
        expectedProgramHash: '0x1234',
      })
      expect(planned.map((row) => row.decision)).toEqual(subjects.map(() => 'refuse'))
      const result = await host.run({
        subjects,
        general: path.general,
        wait: true,
        cell: cellId(),
        attempt: 1,
        expectedProgramHash: '0x1234',
      })
      expect(result.passed, result.detail).toBe(false)
      expect(result.detail).toMatch(/not the expected 0x1234/)
      expect((await created()) - before).toBe(0)
    })

    it('fails when the record says it proved other facts than the PIE gives', async () => {
      const subjects = path.subjects(await fresh(path.count))
      await emulator.control('POST', '/next-query', {
        outcome: 'done',
        record: { sharpFactHash: '0x1234' },
        times: path.count,
      })
      const result = await host.run({ subjects, general: path.general, wait: true, cell: cellId(), attempt: 1 })
      expect(result.passed, result.detail).toBe(false)
      expect(result.detail).toMatch(/sharpFactHash/)
    })

    // The CLI has no on-chain flags: the cell exists where the host offers the check.
    if (host.onchain)
      it('fails when the fact cannot be confirmed on chain (an RPC nothing answers)', async () => {
        const subjects = path.subjects(await fresh(path.count))
        const rpc = `http://127.0.0.1:${await closedPort()}/rpc`
        const result = await host.run({
          subjects,
          general: path.general,
          wait: true,
          cell: cellId(),
          attempt: 1,
          onchainRpc: rpc,
        })
        expect(result.passed, result.detail).toBe(false)
        expect(result.detail).toMatch(/could not be checked on Starknet|not registered on/)
      })

    // The CLI's interruptions are real signals at every stage: test/e2e/interruption-matrix.test.ts.
    if (host.inProcess)
      it.each(STAGES)('interrupted once %s, a re-run pays once in all and passes', async (stage) => {
        const subjects = path.subjects(await fresh(path.count))
        const cell = cellId()
        const before = await created()
        const stopped = await host.run({ subjects, general: path.general, wait: true, cell, attempt: 1, stopAt: stage })
        expect(stopped.passed, stopped.detail).toBe(false)
        const again = await host.run({ subjects, general: path.general, wait: true, cell, attempt: 2 })
        expect(again.passed, again.detail).toBe(true)
        expect((await created()) - before, again.detail).toBeLessThanOrEqual(path.count)
      })
  })
})

describe.each(HOSTS)('$name, several PIEs', (host) => {
  it('refuses one dedup id for several PIEs before anything is read or sent', async () => {
    const subjects = (await fresh(2)).map((pie) => pie.zip)
    const before = await created()
    const result = await host
      .run({ subjects, general: true, wait: false, cell: cellId(), attempt: 1, dedupId: 'release-1' })
      .catch((error: unknown) => ({ passed: false, detail: String(error) }))
    expect(result.passed, result.detail).toBe(false)
    expect(result.detail).toMatch(/dedup id identifies one query/i)
    expect((await created()) - before).toBe(0)
  })
})

describe('the action, several PIEs: what follows one proof is refused before anything is sent', () => {
  it.each([
    ['decommit-destination-chain-id', '0xaa36a7'],
    ['upload-artifacts', 'true'],
    ['release-tag', 'v1.2.3'],
    ['attest', 'true'],
  ])('%s', async (input, value) => {
    const subjects = (await fresh(2)).map((pie) => pie.zip)
    const io = new RecordingIO({
      pie: subjects.join('\n'),
      'base-url': emulator.url,
      'api-key': KEY,
      [input]: value,
      ...(input === 'release-tag' || input === 'attest' ? { 'github-token': 'ghs_test' } : {}),
      ...(input === 'decommit-destination-chain-id' ? { 'tasks-url': emulator.url } : {}),
    })
    io.env = { RUNNER_TEMP: await mkdtemp(join(root, 'runner-temp-')) }
    const before = await created()
    await runAction(io)
    expect(io.failed).toContain(`\`${input}\``)
    expect(io.failed).toContain('names 2 PIEs')
    expect((await created()) - before).toBe(0)
  })
})
