import { describe, expect, it } from 'vitest'
import type { ProvingClient } from '../../../src/clients/proving.ts'
import { requestBudgetFor } from '../../../src/core/budget.ts'
import { WaitTimeoutError } from '../../../src/core/errors.ts'
import { judgeBucket } from '../../../src/pipeline/bucket.ts'
import type { BucketDetailsResponse } from '../../../src/schemas/proving.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'

/** The bucket gate reads every query of the bucket: through the process's budget (issue 35). */
function bucketOf(count: number): {
  details: BucketDetailsResponse
  client: ProvingClient
  reads: number[]
  clock: FakeClock
} {
  const clock = new FakeClock()
  const reads: number[] = []
  const details = {
    bucket: { id: 'b-1', status: 'DONE', leaves: count },
    queries: Array.from({ length: count }, (_, index) => ({ id: `q-${index}`, bucketJobIndex: index })),
  } as unknown as BucketDetailsResponse
  const client = {
    http: { clock, logger: { debug() {}, info() {}, warn() {}, error() {} } },
    readQuery: async (id: string) => {
      reads.push(clock.now())
      return {
        provingQuery: { id, status: 'DONE', result: 'PROOF_GENERATION', bucketJobIndex: Number(id.slice(2)) },
        metadataUrls: [],
      }
    },
  } as unknown as ProvingClient
  return { details, client, reads, clock }
}

describe('the bucket gate under the request budget (issue 35)', () => {
  it("40 queries are read at the budget's rate (here 20 a second: 50 ms apart), not 8 at once", async () => {
    const { details, client, reads, clock } = bucketOf(40)
    requestBudgetFor(clock).configure(20)
    const started = clock.now()
    const verdict = await judgeBucket(client, details, { allowMockedFact: true })
    expect(verdict.rows).toHaveLength(40)
    expect(reads).toEqual(Array.from({ length: 40 }, (_, index) => started + index * 50))
  })

  it('reads that cannot get a turn before the deadline end the gate with the timeout, nothing judged', async () => {
    const { details, client, reads, clock } = bucketOf(40)
    requestBudgetFor(clock).configure(10)
    await expect(
      judgeBucket(client, details, { allowMockedFact: true, deadline: clock.now() + 1_000 }),
    ).rejects.toThrow(WaitTimeoutError)
    expect(reads.length).toBeLessThanOrEqual(11)
  })
})
