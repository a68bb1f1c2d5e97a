import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type JournalParts, recordedResult, SubmissionJournal } from '../../../src/pipeline/journal.ts'

/**
 * Issue 31: `query wait` and the `wait` action gate a query against what was asked for; an entry
 * an interrupted run left in the submission journal is where that is still written.
 */
let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-result-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const SERVICE = 'https://proving.example'
const now = 1_800_000_000_000

async function entry(
  parts: Omit<JournalParts, 'pieDigest' | 'service'> & { service?: string },
  queryId: string | undefined,
  startedAt = now,
): Promise<void> {
  const journal = new SubmissionJournal(dir)
  await journal.open()
  const full: JournalParts = { pieDigest: 'ab'.repeat(32), service: SERVICE, ...parts }
  await journal.write({
    ...full,
    version: 1,
    key: journal.keyOf(full),
    startedAt,
    state: 'submitted',
    provingQueryId: queryId,
  })
}

describe('recordedResult', () => {
  it("gives the L2 endpoint's kind, or the general submission's result (the service's default without one)", async () => {
    await entry({ endpoint: 'l2-pie', params: { layout: 'auto' } }, 'q-l2')
    await entry({ endpoint: 'general', params: { result: 'TRACE_GENERATION' } }, 'q-trace')
    await entry({ endpoint: 'general', params: { layout: 'auto' } }, 'q-default')
    expect(await recordedResult(dir, 'q-l2', SERVICE, now)).toBe('PROOF_VERIFICATION_ON_L2')
    expect(await recordedResult(dir, 'q-trace', SERVICE, now)).toBe('TRACE_GENERATION')
    expect(await recordedResult(dir, 'q-default', SERVICE, now)).toBe('PROOF_GENERATION')
  })

  it('knows nothing of another query, another service, an entry older than 7 days, a torn entry or a missing folder', async () => {
    await entry({ endpoint: 'general', params: { result: 'TRACE_GENERATION' } }, 'q-1')
    await entry(
      { endpoint: 'general', params: { result: 'TRACE_GENERATION', other: 1 } },
      'q-old',
      now - 8 * 24 * 3_600_000,
    )
    await writeFile(join(dir, `${'c'.repeat(32)}.json`), '{"version":1,"provingQueryId":"q-torn"')
    expect(await recordedResult(dir, 'q-2', SERVICE, now)).toBeUndefined()
    expect(await recordedResult(dir, 'q-1', 'https://other.example', now)).toBeUndefined()
    expect(await recordedResult(dir, 'q-old', SERVICE, now)).toBeUndefined()
    expect(await recordedResult(dir, 'q-torn', SERVICE, now)).toBeUndefined()
    expect(await recordedResult(join(dir, 'absent'), 'q-1', SERVICE, now)).toBeUndefined()
  })
})
