import { createHash } from 'node:crypto'
import { appendFile, cp, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { InvalidPieError } from '../../src/core/errors.ts'
import { silentLogger } from '../../src/core/runtime.ts'
import { canonicalZipDigest } from '../../src/pie/pack/pack.ts'
import { generatePie } from '../../src/pie/generate/generate.ts'
import { SubmissionJournal } from '../../src/pipeline/journal.ts'
import { streamPie } from '../../src/pipeline/prepared-pie.ts'
import { submitPieStreamed } from '../../src/pipeline/submit-streamed.ts'
import { REPO_ROOT, runCli } from '../helpers/cli.ts'
import { KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { tcpTap, type TcpTap } from '../helpers/tcp-tap.ts'

/**
 * `proving prove DIR` packs, validates and uploads in one pass: the upload is fed from the zip
 * as it is written, and its end is held back until the PIE is known valid and the journal is
 * written. What a user relies on: the service gets exactly the pie.zip that is kept; a PIE
 * found invalid mid-upload (or a hostile one) creates no query and leaves no file; a good
 * pie.zip already in the pack folder is never replaced by a failure; a service that refuses a
 * body without a length still gets the PIE; a journal that knows the submission stops the
 * upload before its end.
 */

const MiB = 1024 * 1024
const L2 = '/v1/l2/proving-query/proof-generation-verification'
const EXAMPLE_DIR = join(REPO_ROOT, 'examples/fib/pie')

let emulator: TestEmulator
let work: string
/** A valid PIE large enough to be written in blocks with a data descriptor (above 16 MiB: memory.bin 32 MiB), and to be mid-upload when its end is read (at most 8 MiB wait for the upload). */
let big: string
/** The same, made invalid only by its last cell: the address of its first cell, written again. */
let bigInvalid: string

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY] })
  work = await mkdtemp(join(tmpdir(), 'one-pass-'))
  big = join(work, 'big')
  await generatePie({ outDir: big, memoryBytes: 32 * MiB, seed: 11 })
  bigInvalid = join(work, 'big-invalid')
  await cp(big, bigInvalid, { recursive: true })
  const memory = await open(join(bigInvalid, 'memory.bin'), 'r')
  const firstCell = Buffer.alloc(40)
  await memory.read(firstCell, 0, 40, 0)
  await memory.close()
  // The first cell again, its address moved 2^40 cells on: past the end of its segment.
  firstCell[5]! |= 0x01
  await appendFile(join(bigInvalid, 'memory.bin'), firstCell)
}, 120_000)

afterAll(async () => {
  await emulator.close()
  await rm(work, { recursive: true, force: true })
})

beforeEach(async () => {
  await emulator.control('POST', '/reset', {})
})

const queryIds = () => Object.keys(emulator.state.queries)
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** Runs `proving ...` with its temporary files in a folder of their own, and that folder's contents after. */
async function runInScratch(args: string[], env: Record<string, string>) {
  const scratch = await mkdtemp(join(work, 'tmp-'))
  const previous = process.env.TMPDIR
  process.env.TMPDIR = scratch
  try {
    const result = await runCli(args, { env })
    return { ...result, left: await readdir(scratch) }
  } finally {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
  }
}

describe('proving prove DIR in one pass', () => {
  it('sends exactly the bytes of the pie.zip it keeps', { timeout: 60_000 }, async () => {
    const packDir = join(work, 'kept')
    const stream = streamPie(big, { inputName: '<pie>', packDir })
    const { pie, submitted, streamed } = await submitPieStreamed(stream, {
      client: emulator.client(KEY),
      layout: 'auto',
      prover: 'svc_sharp',
      mockFactHash: false,
      logger: silentLogger,
    })
    expect(streamed).toBe(true)
    expect(await readdir(packDir)).toEqual(['pie.zip'])
    const kept = await readFile(pie.zipPath)
    expect(pie.sha256).toBe(sha256(kept))
    expect(pie.sha256).toBe((await canonicalZipDigest(big)).sha256)
    const received = emulator.state.queries[submitted.provingQueryId]!.files.pie!
    expect({ sha256: received.sha256, size: received.size }).toEqual({ sha256: sha256(kept), size: kept.length })
    // The emulator inspected what it received: the PIE's own facts.
    expect(emulator.state.queries[submitted.provingQueryId]!.facts.programHash).toBe(pie.inspection!.programHash)
  })

  it('cuts the upload of a PIE found invalid at its last cell: no query, no file left', {
    timeout: 60_000,
  }, async () => {
    const tap: TcpTap = await tcpTap(emulator.url)
    try {
      // The packer cannot read memory.bin's last block before most of the zip has gone out
      // (at most 8 MiB may wait for the upload), so the first MiB reaches the service first.
      let midUpload = false
      void tap.received(MiB).then(() => (midUpload = true))
      const result = await runInScratch(['prove', bigInvalid], {
        PROVING_BASE_URL: tap.url,
        PROVING_API_KEY: KEY,
        PROVING_REUSE: 'never',
      })
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toMatch(
        /is not a valid Cairo PIE \(1 problem\); the upload was stopped before its end: nothing was submitted/,
      )
      // The appended cell starts where the valid memory.bin ended: its size, a whole number of 40-byte cells.
      expect(result.stderr).toMatch(
        new RegExp(
          `cell at byte ${Math.floor((32 * MiB) / 40) * 40} has address \\(0, 1099511627776\\), past the end of segment 0`,
        ),
      )
      expect(midUpload).toBe(true)
      expect(queryIds()).toEqual([])
      expect(emulator.requests().filter((request) => request.method === 'POST' && request.status === 201)).toEqual([])
      expect(result.left).toEqual([])
    } finally {
      await tap.close()
    }
  })

  it('refuses a hostile PIE directory: no query, no file left', async () => {
    const hostile = join(work, 'hostile')
    await cp(EXAMPLE_DIR, hostile, { recursive: true })
    // metadata.json past its parsing budget (issue 13) with 40 MiB of spaces.
    const metadata = await readFile(join(hostile, 'metadata.json'), 'utf8')
    await writeFile(join(hostile, 'metadata.json'), `${metadata}${' '.repeat(40 * MiB)}`)
    const result = await runInScratch(['prove', hostile], {
      PROVING_BASE_URL: emulator.url,
      PROVING_API_KEY: KEY,
      PROVING_REUSE: 'never',
    })
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toMatch(/metadata\.json/)
    expect(queryIds()).toEqual([])
    expect(result.left).toEqual([])
  })

  it('keeps a good pie.zip already in the pack folder when the PIE is invalid', { timeout: 60_000 }, async () => {
    const packDir = join(work, 'has-good-zip')
    await rm(packDir, { recursive: true, force: true })
    await cp(join(REPO_ROOT, 'examples/fib'), packDir, {
      recursive: true,
      filter: (path) => !path.endsWith('/pie') && !path.includes('/pie/'),
    })
    const good = await readFile(join(packDir, 'pie.zip'))
    const before = await readdir(packDir)
    const stream = streamPie(bigInvalid, { inputName: 'pie', packDir })
    const error = await submitPieStreamed(stream, {
      client: emulator.client(KEY),
      layout: 'auto',
      prover: 'svc_sharp',
      mockFactHash: false,
      logger: silentLogger,
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidPieError)
    expect((await readFile(join(packDir, 'pie.zip'))).equals(good)).toBe(true)
    expect(await readdir(packDir)).toEqual(before)
    expect(queryIds()).toEqual([])
  })

  it('sends the packed file the usual way when the service wants a length (411)', async () => {
    await emulator.control('POST', '/faults', {
      method: 'POST',
      path: L2,
      status: 411,
      body: { message: 'LENGTH_REQUIRED' },
      times: 1,
    })
    const result = await runInScratch(['prove', EXAMPLE_DIR, '--json'], {
      PROVING_BASE_URL: emulator.url,
      PROVING_API_KEY: KEY,
      PROVING_REUSE: 'never',
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(
      /did not take the PIE sent while it was packed \(HTTP 411\); sending the packed pie\.zip/,
    )
    const { provingQueryId } = JSON.parse(result.stdout)
    expect(queryIds()).toEqual([provingQueryId])
    expect(emulator.state.queries[provingQueryId]!.files.pie!.sha256).toBe(
      (await canonicalZipDigest(EXAMPLE_DIR)).sha256,
    )
    expect(result.left).toEqual([])
  })

  it.each([
    ['a reset before the body was read', { kind: 'drop' }, /did not take the PIE sent while it was packed \(.+\)/],
    [
      'a non-JSON 404 page from something in between',
      { kind: 'gateway-404' },
      /did not take the PIE sent while it was packed \(HTTP 404\)/,
    ],
  ])(
    'sends the packed file when the streamed upload meets %s before its end',
    { timeout: 60_000 },
    async (_what, fault, warning) => {
      await emulator.control('POST', '/faults', { method: 'POST', path: L2, times: 1, ...fault })
      // The large PIE: its zip cannot be complete (so the body's end cannot have gone out) before
      // most of it went through the upload, which the fault stops at its first bytes.
      const result = await runInScratch(['prove', big, '--json'], {
        PROVING_BASE_URL: emulator.url,
        PROVING_API_KEY: KEY,
        PROVING_REUSE: 'never',
      })
      expect(result.code, result.stderr).toBe(0)
      expect(result.stderr).toMatch(warning)
      expect(queryIds()).toEqual([JSON.parse(result.stdout).provingQueryId])
      expect(result.left).toEqual([])
    },
  )

  it('still ends, with the reason, when the upload fails before taking any byte (a URL that is not the service)', {
    timeout: 60_000,
  }, async () => {
    await emulator.control('POST', '/faults', { method: 'GET', path: '/is-alive', kind: 'gateway-404', times: 1 })
    const result = await runInScratch(['prove', big], {
      PROVING_BASE_URL: emulator.url,
      PROVING_API_KEY: KEY,
      PROVING_REUSE: 'never',
    })
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toMatch(/does not answer like the proving service/)
    expect(queryIds()).toEqual([])
    expect(result.left).toEqual([])
  })

  it('follows the query the journal already holds, cutting the upload before its end', async () => {
    const journalDir = await mkdtemp(join(work, 'journal-'))
    const first = await runCli(['prove', EXAMPLE_DIR, '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, PROVING_REUSE: 'never' },
    })
    expect(first.code, first.stderr).toBe(0)
    const { provingQueryId } = JSON.parse(first.stdout)
    // What a run killed after the service answered leaves behind.
    const journal = new SubmissionJournal(journalDir)
    const parts = {
      pieDigest: (await canonicalZipDigest(EXAMPLE_DIR)).sha256,
      service: new URL(emulator.url).origin,
      endpoint: 'l2-pie' as const,
      params: { layout: 'auto', prover: 'svc_sharp', mockFactHash: false },
    }
    await journal.write({
      version: 1,
      key: journal.keyOf(parts),
      ...parts,
      startedAt: Date.now(),
      state: 'submitted',
      provingQueryId,
    })
    const again = await runCli(['prove', EXAMPLE_DIR, '--json'], {
      env: {
        PROVING_BASE_URL: emulator.url,
        PROVING_API_KEY: KEY,
        PROVING_REUSE: 'never',
        PROVING_JOURNAL_DIR: journalDir,
      },
    })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`Following query ${provingQueryId}, submitted by an earlier run`)
    expect(JSON.parse(again.stdout).provingQueryId).toBe(provingQueryId)
    expect(queryIds()).toEqual([provingQueryId])
  })
})
