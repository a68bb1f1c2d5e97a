import fc from 'fast-check'
import { RequestBudget } from '../../../src/core/budget.ts'
import { systemClock } from '../../../src/core/runtime.ts'
import { KeyQueries } from '../../../src/pipeline/key-queries.ts'
import { beforeAll, describe, expect, it } from 'vitest'
import type { ProvingClient } from '../../../src/clients/proving.ts'
import { NetworkError, ServiceError, WaitTimeoutError } from '../../../src/core/errors.ts'
import { computeIntegrityFact, computeSharpFact, inspectPie, type PieInspection } from '../../../src/pie/index.ts'
import {
  DEFAULT_L2_PROVER,
  findReusableQuery,
  l2ReuseRequest,
  RerunNothingSentError,
} from '../../../src/pipeline/reuse.ts'
import { silentLogger } from '../../../src/core/runtime.ts'
import { EXAMPLE_PIE } from '../../helpers/example-pie.ts'

/**
 * Issue 32's re-run (an earlier attempt stopped, its query left running), as a property over
 * what the service can do: each running query ends proving this PIE, ends with another PIE's
 * facts, ends FAILED, or cannot be followed to its end (a timeout, the network, a service
 * error); its listed program hash is absent, null, of another type, this PIE's in any spelling,
 * another's, or garbage; the list itself may not be readable. The invariant, written from the
 * promise (pay once per statement, fail closed), not from the code:
 *
 *   - a query that ends proving this PIE is followed (nothing is paid);
 *   - otherwise "submit" is answered only when every candidate was followed to its end;
 *   - a candidate that could not be followed, or a list that could not be read, is a refusal
 *     (RerunNothingSentError), never a submission.
 *
 * The version before this test turned the refusal into "the list could not be read; submitting"
 * (the listing's catch swallowed it): a second payment on exactly the path it was for.
 */
const SEED = Number(process.env.PROVING_FC_SEED ?? 20261128)
const RUNS = Number(process.env.PROVING_FC_RUNS ?? 400)
const NOW = Date.parse('2026-11-28T00:00:00.000Z')
const REQUEST = l2ReuseRequest({
  layout: 'auto',
  prover: DEFAULT_L2_PROVER,
  mockFactHash: false,
  allowMockedFact: false,
})

let inspection: PieInspection
let programHash: bigint
let facts: { sharp: bigint; integrity: bigint }

beforeAll(async () => {
  inspection = await inspectPie(EXAMPLE_PIE, { sha256: false })
  programHash = BigInt(inspection.programHashes.pedersen)
  const output = inspection.output.map((word) => BigInt(word))
  facts = {
    sharp: computeSharpFact(programHash, output, inspection.factTopology),
    integrity: computeIntegrityFact(programHash, output),
  }
})

type Ending = 'proves' | 'other-facts' | 'failed' | 'timeout' | 'network' | 'service-error'
type ShownHash = 'absent' | 'null' | 'number' | 'same' | 'same-padded-upper' | 'other' | 'garbage'
type Candidate = { ending: Ending; shown: ShownHash }

const candidate = fc.record({
  ending: fc.constantFrom<Ending>('proves', 'other-facts', 'failed', 'timeout', 'network', 'service-error'),
  shown: fc.constantFrom<ShownHash>('absent', 'null', 'number', 'same', 'same-padded-upper', 'other', 'garbage'),
})

/** Whether the oracle expects the listed query to be a candidate: a program hash it shows must be this PIE's. */
const isCandidate = (shown: ShownHash) => shown !== 'other' && shown !== 'garbage'

function listedHash(shown: ShownHash): Record<string, unknown> {
  switch (shown) {
    case 'absent':
      return {}
    case 'null':
      return { programHash: null }
    case 'number':
      return { programHash: 42 }
    case 'same':
      return { programHash: `0x${programHash.toString(16)}` }
    case 'same-padded-upper':
      return { programHash: `0x00${programHash.toString(16).toUpperCase()}` }
    case 'other':
      return { programHash: '0x1234' }
    case 'garbage':
      return { programHash: 'not a hash' }
  }
}

function finalRecord(id: string, ending: Ending): Record<string, unknown> {
  const base = {
    id,
    result: 'PROOF_VERIFICATION_ON_L2',
    step: 'PROOF_VERIFICATION_ON_L2',
    layout: 'auto',
    createdAt: new Date(NOW - 60_000).toISOString(),
  }
  if (ending === 'failed')
    return {
      ...base,
      status: 'FAILED',
      programHash: null,
      sharpFactHash: null,
      integrityFactHash: null,
      isFactMocked: null,
      errorReason: 'TRACE_GENERATION failed',
    }
  const sharp = ending === 'proves' ? facts.sharp : facts.sharp ^ 1n
  const integrity = ending === 'proves' ? facts.integrity : facts.integrity ^ 1n
  return {
    ...base,
    status: 'DONE',
    programHash: `0x${programHash.toString(16)}`,
    sharpFactHash: `0x${sharp.toString(16)}`,
    integrityFactHash: `0x${integrity.toString(16)}`,
    isFactMocked: false,
  }
}

function service(candidates: Candidate[], listFails: boolean) {
  const waited: string[] = []
  const running = candidates.map((each, index) => ({
    id: `q-${index}`,
    status: index % 2 ? 'RECEIVED' : 'IN_PROGRESS',
    result: 'PROOF_VERIFICATION_ON_L2',
    layout: 'auto',
    createdAt: new Date(NOW - 60_000 - index).toISOString(),
    ...listedHash(each.shown),
  }))
  const client = {
    listQueries: async () => {
      if (listFails) throw new NetworkError('connect ECONNRESET', { beforeProcessing: true })
      return { provingQueries: running, total: running.length }
    },
    waitForQuery: async (id: string) => {
      waited.push(id)
      const { ending } = candidates[Number(id.slice(2))]!
      if (ending === 'timeout') throw new WaitTimeoutError(`Timed out waiting for query ${id}.`)
      if (ending === 'network') throw new NetworkError('socket hang up')
      if (ending === 'service-error') throw new ServiceError('The proving service answered 401.', { status: 401 })
      return { provingQuery: finalRecord(id, ending), metadataUrls: [] }
    },
  } as unknown as ProvingClient
  return { client, waited }
}

describe('a re-run that finds queries still running (issue 32)', () => {
  it('follows one that proves the PIE; submits only when every candidate ended without proving it; else refuses', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(candidate, { minLength: 0, maxLength: 6 }),
        fc.boolean(),
        async (candidates, listFails) => {
          const { client, waited } = service(candidates, listFails)
          const outcome = await findReusableQuery(client, inspection, REQUEST, {
            logger: silentLogger,
            inFlight: { timeoutMs: 60_000, sinceMs: 3_600_000, now: () => NOW },
            // Hundreds of runs of one list each: a budget of their own, not the process's ten a second.
            queries: new KeyQueries(client, { budget: new RequestBudget(systemClock, 1_000_000) }),
          }).then(
            (value) => ({ value }),
            (error: unknown) => ({ error }),
          )
          const followed = candidates.flatMap((each, index) =>
            isCandidate(each.shown) ? [{ ...each, id: `q-${index}` }] : [],
          )
          if (listFails) {
            expect('error' in outcome && outcome.error).toBeInstanceOf(RerunNothingSentError)
            return
          }
          // Only the listed queries that may be this PIE's are waited for.
          expect(new Set(waited)).toEqual(new Set(followed.map((each) => each.id)))
          const proving = followed.filter((each) => each.ending === 'proves')
          if (proving.length > 0) {
            expect('value' in outcome && outcome.value.reused).toBe(true)
            if ('value' in outcome && outcome.value.reused)
              expect(proving.map((each) => each.id)).toContain(outcome.value.record.id)
          } else if (
            followed.some(
              (each) => each.ending === 'timeout' || each.ending === 'network' || each.ending === 'service-error',
            )
          ) {
            expect('error' in outcome && outcome.error).toBeInstanceOf(RerunNothingSentError)
          } else {
            // Every candidate ended with other facts or FAILED (or there were none): submit.
            expect('value' in outcome && outcome.value.reused).toBe(false)
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    )
  })
})
