import { cp, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { checkQueryFacts } from '../../src/pie/index.ts'
import { REPO_ROOT, runCli } from '../helpers/cli.ts'
import { generatedPie } from '../helpers/example-pie.ts'

const EXAMPLE_DIR = join(REPO_ROOT, 'examples/fib/pie')
const EXAMPLE_ZIP = join(REPO_ROOT, 'examples/fib/pie.zip')
const PUBLISHED_FIB_PROGRAM_HASH = '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45'

let work: string
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'cli-pie-'))
})
afterAll(async () => {
  await rm(work, { recursive: true, force: true })
})

describe('proving validate', () => {
  it('exits 0 on a valid PIE, zip or directory', async () => {
    const generated = await generatedPie({ seed: 5, memoryBytes: 64 * 1024 })
    for (const pie of [EXAMPLE_ZIP, EXAMPLE_DIR, generated.zip, generated.dir]) {
      const result = await runCli(['validate', pie])
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toMatch(/valid Cairo PIE/)
    }
  })

  it('exits 2 and lists every broken rule', async () => {
    const dir = join(work, 'broken')
    await cp(EXAMPLE_DIR, dir, { recursive: true })
    await truncate(join(dir, 'memory.bin'), 4079)
    await writeFile(join(dir, 'execution_resources.json'), '{"n_steps": 0, "builtin_instance_counter": {}}')
    const result = await runCli(['validate', dir])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/memory\.bin/)
    expect(result.stderr).toMatch(/n_steps/)
    const json = await runCli(['validate', dir, '--json'])
    expect(json.code).toBe(2)
    const report = JSON.parse(json.stdout) as { problems: string[]; refusals: { problem: string; reason: string }[] }
    expect(report.problems.length).toBeGreaterThanOrEqual(2)
    // Each problem's reason class, as a field (issue 33).
    expect(report.refusals.map((refusal) => refusal.problem)).toEqual(report.problems)
    expect(report.refusals).toContainEqual({
      problem: expect.stringMatching(/^execution_resources\.json: n_steps = 0/),
      reason: 'cairo-lang',
    })
    expect(report.refusals).toContainEqual({
      problem: expect.stringMatching(/^memory\.bin: size 4079 bytes/),
      reason: 'cairo-lang',
    })
    expect(result.stderr).toMatch(/n_steps = 0; must satisfy 1 <= n_steps < 2\^30 \[cairo-lang refuses it\]/)
  })

  it('words an invalid PIE as `pack` and `prove` do: one headline format, the same problem lines', async () => {
    const dir = join(work, 'one-format')
    await cp(EXAMPLE_DIR, dir, { recursive: true })
    await writeFile(
      join(dir, 'execution_resources.json'),
      '{"n_steps": 0, "builtin_instance_counter": {"output_builtin": 2}}',
    )
    const problems = (output: string) => output.split('\n').filter((line) => line.startsWith('  '))
    const validated = await runCli(['validate', dir])
    const packed = await runCli(['pack', dir, '-o', join(work, 'one-format.zip')])
    const proved = await runCli(['prove', dir, '--emulator'])
    const quoted = dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
    const headline = (input: string, outcome: string) =>
      new RegExp(`^proving: ${input}: ${quoted} is not a valid Cairo PIE \\(1 problem\\)${outcome}$`, 'm')
    expect(validated.stderr).toMatch(headline('<pie>', '\\.'))
    expect(packed.stderr).toMatch(headline('<dir>', '; nothing was written\\.'))
    expect(proved.stderr).toMatch(headline('<pie>', '; .*nothing was submitted\\.'))
    for (const run of [validated, packed, proved]) expect(run.code).toBe(2)
    expect(problems(validated.stderr)).toEqual(problems(packed.stderr))
    expect(problems(validated.stderr)).toEqual(problems(proved.stderr))
    expect(problems(validated.stderr)).toEqual([expect.stringMatching(/^ {2}execution_resources\.json: n_steps = 0/)])
  })

  it('exits 2 naming the path when nothing is there', async () => {
    const result = await runCli(['validate', join(work, 'nope.zip')])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/Nothing at .*nope\.zip/)
  })
})

describe('proving pack', () => {
  it('writes the canonical zip: byte-identical twice, equal to the committed example', async () => {
    const first = join(work, 'a.zip')
    const second = join(work, 'b.zip')
    const packed = await runCli(['pack', EXAMPLE_DIR, '-o', first, '--json'])
    expect(packed.code, packed.stderr).toBe(0)
    await runCli(['pack', EXAMPLE_DIR, '-o', second])
    const bytes = await readFile(first)
    expect(bytes.equals(await readFile(second))).toBe(true)
    expect(bytes.equals(await readFile(EXAMPLE_ZIP))).toBe(true)
    expect(JSON.parse(packed.stdout).sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  it('leaves an existing zip untouched and no file behind when the PIE is invalid or hostile', async () => {
    const out = join(work, 'kept')
    await rm(out, { recursive: true, force: true })
    await cp(EXAMPLE_DIR, join(out, 'invalid'), { recursive: true })
    // Invalid: a memory cell cut in half and a step count of 0.
    await truncate(join(out, 'invalid', 'memory.bin'), 4079)
    await writeFile(join(out, 'invalid', 'execution_resources.json'), '{"n_steps": 0, "builtin_instance_counter": {}}')
    // Hostile: metadata.json past its parsing budget (issue 13's limit) with 40 MiB of spaces.
    await cp(EXAMPLE_DIR, join(out, 'hostile'), { recursive: true })
    const metadata = await readFile(join(out, 'hostile', 'metadata.json'), 'utf8')
    await writeFile(join(out, 'hostile', 'metadata.json'), `${metadata}${' '.repeat(40 * 1024 * 1024)}`)
    const good = await readFile(EXAMPLE_ZIP)
    for (const name of ['invalid', 'hostile']) {
      const zip = join(out, `${name}.zip`)
      await writeFile(zip, good)
      const result = await runCli(['pack', join(out, name), '-o', zip])
      expect(result.code, result.stderr).toBe(2)
      expect((await readFile(zip)).equals(good)).toBe(true)
      const fresh = join(out, `${name}-fresh.zip`)
      expect((await runCli(['pack', join(out, name), '-o', fresh])).code).toBe(2)
    }
    expect((await readdir(out)).sort()).toEqual(['hostile', 'hostile.zip', 'invalid', 'invalid.zip'])
  })

  it('refuses a directory with an extra entry, naming it', async () => {
    const dir = join(work, 'extra')
    await cp(EXAMPLE_DIR, dir, { recursive: true })
    await writeFile(join(dir, 'notes.txt'), 'hello')
    const result = await runCli(['pack', dir, '-o', join(work, 'extra.zip')])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/notes\.txt/)
  })
})

describe('proving inspect', () => {
  it('prints the documented JSON keys with exact values', async () => {
    const result = await runCli(['inspect', EXAMPLE_ZIP, '--json'])
    expect(result.code, result.stderr).toBe(0)
    const inspection = JSON.parse(result.stdout)
    expect(Object.keys(inspection)).toEqual(
      expect.arrayContaining([
        'programHash',
        'programHashes',
        'output',
        'nSteps',
        'jobSize',
        'sharpFactHash',
        'integrityFactHash',
        'sha256',
      ]),
    )
    expect(inspection.programHash).toBe(PUBLISHED_FIB_PROGRAM_HASH)
    // Only the variant asked for (Pedersen by default) is computed.
    expect(inspection.programHashVariant).toBe('pedersen')
    expect(inspection.programHashes).toEqual({ pedersen: PUBLISHED_FIB_PROGRAM_HASH })
    expect(inspection.jobSize).toBe('XS')
  })

  it('computes the program hash variants asked for, and the facts from the chosen one', async () => {
    const all = JSON.parse((await runCli(['inspect', EXAMPLE_ZIP, '--json', '--hash-variant', 'all'])).stdout)
    expect(Object.keys(all.programHashes).sort()).toEqual(['blake', 'pedersen', 'poseidon'])
    expect(all.programHash).toBe(PUBLISHED_FIB_PROGRAM_HASH)
    const human = await runCli(['inspect', EXAMPLE_ZIP, '--hash-variant', 'all'])
    expect(human.stdout).toMatch(
      /program hash +0x[0-9a-f]+ \(Pedersen\)\n +Poseidon +0x[0-9a-f]+\n +Blake +0x[0-9a-f]+\n/,
    )
    for (const variant of ['poseidon', 'blake'] as const) {
      const one = await runCli(['inspect', EXAMPLE_ZIP, '--json', '--hash-variant', variant])
      expect(one.code, one.stderr).toBe(0)
      const inspection = JSON.parse(one.stdout)
      expect(inspection.programHashes).toEqual({ [variant]: all.programHashes[variant] })
      expect(inspection.programHash).toBe(all.programHashes[variant])
      // The facts a service proving with that variant reports: checked like a DONE query's.
      const check = await checkQueryFacts(
        {
          programHash: inspection.programHash,
          sharpFactHash: inspection.sharpFactHash,
          integrityFactHash: inspection.integrityFactHash,
        },
        EXAMPLE_ZIP,
      )
      expect(check).toMatchObject({ ok: true, programHashVariant: variant })
    }
    const wrong = await runCli(['inspect', EXAMPLE_ZIP, '--hash-variant', 'sha3'])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toMatch(/--hash-variant sha3 is not one of pedersen, poseidon, blake, all/)
  })
})

describe('proving prove with a PIE directory or an invalid PIE', () => {
  let emulator: RunningEmulator
  beforeAll(async () => {
    emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 } })
  })
  afterAll(async () => {
    await emulator.close()
  })

  it('packs a directory, proves it and checks the facts', async () => {
    const result = await runCli(['prove', EXAMPLE_DIR, '--wait', '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: 'key-dir-1234' },
    })
    expect(result.code, result.stderr).toBe(0)
    const output = JSON.parse(result.stdout)
    expect(output.provingQuery.programHash).toBe(PUBLISHED_FIB_PROGRAM_HASH)
    expect(output.localFactCheck.ok).toBe(true)
  })

  it('never submits an invalid PIE', async () => {
    const dir = join(work, 'invalid-upload')
    await cp(EXAMPLE_DIR, dir, { recursive: true })
    await truncate(join(dir, 'memory.bin'), 100)
    const zip = join(work, 'invalid-upload.zip')
    expect((await runCli(['pack', EXAMPLE_DIR, '-o', zip])).code).toBe(0)
    await truncate(zip, 1000)
    const before = Object.keys(emulator.state.queries).length
    // A directory is uploaded while it is packed, its end held back until it is known valid
    // (test/e2e/prove-dir-one-pass.test.ts); a pie.zip is checked before a byte is sent.
    const requests = emulator.requests().length
    const result = await runCli(['prove', zip, '--wait'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: 'key-dir-1234' },
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/not a valid Cairo PIE/)
    expect(emulator.requests().length).toBe(requests)
    const fromDir = await runCli(['prove', dir, '--wait'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: 'key-dir-1234' },
    })
    expect(fromDir.code).toBe(2)
    expect(fromDir.stderr).toMatch(/not a valid Cairo PIE/)
    expect(
      emulator
        .requests()
        .slice(requests)
        .filter((request) => request.method === 'POST' && request.status === 201),
    ).toEqual([])
    expect(Object.keys(emulator.state.queries).length).toBe(before)
  })
})

describe('proving prove --wait when the service reports other facts', () => {
  it('exits 1 and names the fact that differs', async () => {
    const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 } })
    try {
      const env = { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: 'key-mismatch-1234' }
      // A real DONE record for this PIE, then the same record with another SHARP fact served in
      // its place: what a service that proved something else would answer.
      const honest = await runCli(['prove', EXAMPLE_ZIP, '--wait', '--json'], { env })
      expect(honest.code, honest.stderr).toBe(0)
      const { provingQuery, metadataUrls } = JSON.parse(honest.stdout)
      const forged = { provingQuery: { ...provingQuery, sharpFactHash: '0x1234' }, metadataUrls }
      const fault = await fetch(`${emulator.url}/_emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          method: 'GET',
          path: '/docs/proving-query/:id',
          status: 200,
          body: forged,
          times: 1000,
        }),
      })
      expect(fault.ok).toBe(true)
      const result = await runCli(['prove', EXAMPLE_ZIP, '--wait'], { env })
      expect(result.code).toBe(1)
      expect(result.stderr).toMatch(/sharpFactHash differs: the service says 0x1234/)
      expect(result.stderr).not.toMatch(/Facts checked locally/)
    } finally {
      await emulator.close()
    }
  })
})
