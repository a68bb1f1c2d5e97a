import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, spawnCli } from '../helpers/cli.ts'
import { EXAMPLE, EXAMPLE_PIE } from '../helpers/example-pie.ts'

const PIE = EXAMPLE_PIE
const API_KEY = 'pk_test_CLI_E2E_5e1f0a9c'

/**
 * Issue 2's "done when", over real HTTP: `proving emulator` in its own process, then
 * `proving prove <the example PIE> --wait --json` against it ends DONE with a query id.
 */
describe('proving emulator + proving prove (separate processes)', () => {
  let emulator: ReturnType<typeof spawnCli>
  let baseUrl: string

  beforeAll(async () => {
    emulator = spawnCli(['emulator', '--port', '0', '--step-ms', '50'])
    const match = await emulator.waitForOutput(/listening on (http:\/\/\S+)/)
    baseUrl = match[1]!
  })

  afterAll(async () => {
    emulator.child.kill('SIGINT')
    const result = await emulator.done
    expect(result.code).toBe(0)
  })

  it("the wrong program: refused before paying, naming the PIE's hash in every variant it was compared in", async () => {
    const run = spawnCli(['prove', PIE, '--wait', '--expected-program-hash', '0x1234'], {
      env: { PROVING_BASE_URL: baseUrl, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    const result = await run.done
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      `The PIE's program hash is ${EXAMPLE.programHash}, not the expected 0x1234; nothing was submitted.`,
    )
    // A hash given in another variant (a Cairo 1 program's Poseidon) is told from another program.
    expect(result.stderr).toMatch(
      new RegExp(
        `Pedersen ${EXAMPLE.programHash}; Poseidon 0x[0-9a-f]+; Blake 0x[0-9a-f]+; none is the expected 0x1234`,
      ),
    )
    expect(result.stderr).not.toMatch(/Submitted: query/)
  })

  it('proves the example PIE and prints the final query as JSON', async () => {
    const run = spawnCli(['prove', PIE, '--wait', '--json'], {
      env: { PROVING_BASE_URL: baseUrl, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    const result = await run.done
    // stdout is the JSON alone; the progress a person watches still reaches stderr.
    expect(result.stderr).toMatch(/Submitted: query \S+[\s\S]*DONE/)
    expect(result.code).toBe(0)
    const output = JSON.parse(result.stdout)
    expect(output.provingQuery.status).toBe('DONE')
    expect(output.provingQuery.id).toMatch(/\S+/)
    expect(output.metadataUrls.length).toBeGreaterThan(0)
    expect(output.localFactCheck.ok).toBe(true)
    expect(result.stdout + result.stderr).not.toContain(API_KEY)
  })

  it('shows one progress line per change to a person, and the query at the end', async () => {
    // The query stands still until the CLI has shown its first progress line, then is completed
    // through the control API: at least two changes are seen, whatever the machine's speed.
    const control = (method: string, path: string, body?: unknown) =>
      fetch(`${baseUrl}/_emulator/${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    const { timing } = (await (await control('GET', 'timing')).json()) as { timing: unknown }
    await control('PUT', 'timing', { receivedMs: 0, stepMs: 600_000 })
    let completing: Promise<unknown> | undefined
    const result = await runCli(['prove', PIE, '--wait'], {
      env: { PROVING_BASE_URL: baseUrl, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
      onOutput: ({ stdout, stderr }) => {
        const id = /Submitted: query (\S+)/.exec(stdout + stderr)?.[1]
        if (completing || !id || !/^\[\s*\d/m.test(stderr)) return
        completing = control('POST', `queries/${id}/complete`)
      },
    }).finally(() => control('PUT', 'timing', timing))
    await completing
    expect(result.code).toBe(0)
    const progress = result.stderr.split('\n').filter((line) => /^\[\s*\d/.test(line))
    expect(progress.length).toBeGreaterThanOrEqual(2)
    expect(new Set(progress.map((line) => line.replace(/^\[[^\]]*\]/, ''))).size).toBe(progress.length)
    expect(result.stderr).toMatch(/Facts checked locally/)
    expect(result.stdout).toMatch(/status\s+DONE/)
  })

  it('without --wait prints the query id, which `query wait` then follows to DONE', async () => {
    const env = { PROVING_BASE_URL: baseUrl, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' }
    const submitted = await runCli(['prove', PIE, '--json'], { env })
    expect(submitted.code).toBe(0)
    const { provingQueryId } = JSON.parse(submitted.stdout)
    const waited = await runCli(['query', 'wait', provingQueryId, '--json'], { env })
    expect(waited.code).toBe(0)
    expect(JSON.parse(waited.stdout).provingQuery).toMatchObject({ id: provingQueryId, status: 'DONE' })
  })

  it('runs from the built bin too (what `npm install` puts on PATH)', async () => {
    const result = await spawnCli(['query', 'list', '--json'], {
      entry: 'bin',
      env: { PROVING_BASE_URL: baseUrl, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    }).done
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout).total).toBeGreaterThanOrEqual(2)
  })
})

describe('proving prove --emulator (in-process emulator)', () => {
  it('needs no address or key', async () => {
    const result = await runCli(['prove', PIE, '--emulator', '--wait', '--json'])
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout).provingQuery.status).toBe('DONE')
  })
})

describe('exit codes', () => {
  it('2 for usage errors, naming the flag', async () => {
    const missingUrl = await runCli(['prove', PIE], { env: { PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' } })
    expect(missingUrl.code).toBe(2)
    expect(missingUrl.stderr).toMatch(/--base-url/)
    const badLayout = await runCli(['prove', PIE, '--layout', 'fast!', '--emulator'])
    expect(badLayout.code).toBe(2)
    expect(badLayout.stderr).toMatch(/--layout must be one of/)
    const unknownFlag = await runCli(['prove', PIE, '--wiat'])
    expect(unknownFlag.code).toBe(2)
    expect(unknownFlag.stderr).toMatch(/--wiat/)
    expect(unknownFlag.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('3 when the service cannot be reached', async () => {
    const result = await runCli(['query', 'get', 'q-1'], { env: { PROVING_BASE_URL: 'http://127.0.0.1:9' } })
    expect(result.code).toBe(3)
    expect(result.stderr).toMatch(/connection refused/)
  })

  it('--help everywhere exits 0', async () => {
    for (const args of [['--help'], ['prove', '--help'], ['query', 'wait', '--help'], ['bucket', 'close', '--help']]) {
      const result = await runCli(args)
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/Usage: proving/)
    }
  })
})

describe('interruption', () => {
  it('SIGINT during a wait exits 130 within seconds and says how to resume with the query id', async () => {
    const emulator = spawnCli(['emulator', '--port', '0', '--step-ms', '600000'])
    const baseUrl = (await emulator.waitForOutput(/listening on (http:\/\/\S+)/))[1]!
    try {
      const run = spawnCli(['prove', PIE, '--wait'], {
        env: { PROVING_BASE_URL: baseUrl, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
      })
      const id = (await run.waitForOutput(/Submitted: query (\S+)/))[1]!
      await run.waitForOutput(/RECEIVED|IN_PROGRESS/)
      const sentAt = Date.now()
      run.child.kill('SIGINT')
      const result = await run.done
      expect(Date.now() - sentAt).toBeLessThan(5_000)
      expect(result.code).toBe(130)
      expect(result.stderr).toContain(`proving query wait ${id}`)
      expect(result.stderr).not.toMatch(/\n\s+at /)
    } finally {
      emulator.child.kill('SIGTERM')
      await emulator.done
    }
  })
})
