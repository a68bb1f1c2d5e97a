/**
 * `bucket-close/`: closes a bucket, which finalizes its queries and starts the aggregated
 * on-chain verification. Closing is idempotent: a bucket already closed is returned unchanged.
 * With `wait: true` it then waits for the bucket to end and gates on every query in it (DONE, a
 * proof whatever its record says, fact not mocked unless allowed, the expected program hash),
 * that it holds the `expected-queries` (ids or a count) and no other, checking each query's facts
 * against the PIEs given in `pie` (and that each of those PIEs has its query): a per-query table
 * in the summary and as the `queries` output (JSON).
 */
import { defineAction } from '../steps/define-action.ts'
import { BUCKET_CLOSE_INPUTS, requireService } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClientModule } from '../steps/lazy.ts'
import { bucketOutputs } from '../steps/outputs.ts'
import { startGitHub } from '../steps/github.ts'
import { expandPieInput } from '../steps/query-pie.ts'
import { ProvingStep } from '../steps/query-step.ts'
import { STATE } from '../steps/state.ts'
import type { BucketVerdict, GivenPie } from '../../pipeline/bucket.ts'
import type { BucketDetailsResponse } from '../../schemas/proving.ts'
import type { ActionIO } from '../types.ts'

export const run = defineAction({
  inputs: BUCKET_CLOSE_INPUTS,
  crossCheck: (context) => {
    requireService(context)
    if (!context.values.wait && context.raw.pie) {
      context.problem(
        'pie',
        '`pie` is for the gate of `wait: true`: set `wait: true` to check the queries against the PIEs.',
      )
    }
    if (!context.values.wait && context.raw['expected-queries']) {
      context.problem(
        'expected-queries',
        '`expected-queries` is for the gate of `wait: true`: set `wait: true` to check the bucket holds those queries.',
      )
    }
  },
  step: (io, signal) => new ProvingStep(io, { action: 'Close bucket', signal }),
  async work({ io, signal, inputs, step }) {
    const subject = `bucket ${inputs['bucket-id']}`
    if (
      !(await startGitHub(io, step, inputs, {
        subject,
        serviceUrl: () => inputs['base-url'],
        signal,
        allowInsecureHttp: inputs['allow-insecure-http'] === true,
      }))
    )
      return
    // The PIEs are read before the bucket is closed: a wrong path stops the step with nothing closed.
    const pies = inputs.pie ? await inspectPies(io, inputs.pie, signal) : undefined
    const services = await loadClientModule()
    const client = services.provingClient({
      baseUrl: inputs['base-url']!,
      apiKey: inputs['api-key'],
      logger: loggerFor(io),
      allowInsecureHttp: inputs['allow-insecure-http'] === true,
    })
    const bucket = await client.closeBucket(inputs['bucket-id'], { signal })
    step.outputs.set(bucketOutputs(bucket))
    const status = typeof bucket.status === 'string' ? bucket.status : undefined
    if (status) step.outputs.set({ status })
    io.info(
      `Bucket ${bucket.id}${status ? ` is ${status}` : ' closed'} with ${bucket.leaves} ${bucket.leaves === 1 ? 'query' : 'queries'}.`,
    )
    if (!inputs.wait) {
      step.extraRows.push(
        ['Bucket', { code: bucket.id }],
        ['Status', status],
        ['Queries (leaves)', String(bucket.leaves)],
        ['Mock proof', bucket.mockProof ? 'YES: the aggregated proof is mocked' : 'no'],
        ['External id', bucket.externalId ?? undefined],
      )
      await step.report({
        outcome: 'done',
        headline: `Bucket ${bucket.id} is closed: its queries are being finalized and verified together.`,
        nextSteps: ['To gate on its queries, run this sub-action with `wait: true` (closing again is harmless).'],
      })
      return
    }

    // Killed mid-wait, the post step says what was closed and how to gate on it later.
    io.saveState(STATE.subject, `bucket ${bucket.id}`)
    io.saveState(
      STATE.followUp,
      `Gate on it later with this sub-action again (closing is idempotent): bucket-id ${bucket.id}, wait: true; or \`proving bucket close ${bucket.id} --wait\`.`,
    )
    const { judgeBucket, waitForBucket } = await import('../../pipeline/bucket.ts')
    const { formatDuration } = await import('../../core/poll.ts')
    const timeoutMs = inputs['timeout-minutes'] * 60_000
    // One timeout for the wait and the reads of the queries after it.
    const deadline = client.http.clock.now() + timeoutMs
    io.startGroup(`Waiting for bucket ${bucket.id} to end (up to ${formatDuration(timeoutMs)})`)
    let details
    try {
      details = await waitForBucket(client, bucket.id, {
        timeoutMs,
        signal,
        onProgress: (progress) => {
          io.info(
            `[${formatDuration(progress.elapsedMs).padStart(6)}] ${progress.status}  ${progress.leaves} ${progress.leaves === 1 ? 'query' : 'queries'}`,
          )
          step.outputs.set({ status: progress.status })
        },
      })
    } finally {
      io.endGroup()
    }
    const verdict = await judgeBucket(client, details, {
      allowMockedFact: inputs['allow-mocked-fact'],
      expectedProgramHash: inputs['expected-program-hash'],
      expected: inputs['expected-queries'],
      pies,
      signal,
      deadline,
    })
    await reportVerdict(step, bucket.id, details, verdict, pies)
  },
})

/** Each PIE given, inspected (its program and output): what the gate compares each query's facts with. */
async function inspectPies(io: ActionIO, input: string, signal: AbortSignal): Promise<GivenPie[]> {
  const { preparePie } = await import('../../pipeline/prepared-pie.ts')
  const pies: GivenPie[] = []
  io.startGroup('Inspecting the PIEs proved into the bucket')
  try {
    for (const path of await expandPieInput(io, input)) {
      const prepared = await preparePie(path, { inputName: 'pie', signal, inspect: true })
      await prepared.cleanup()
      pies.push({ path: relativeToWorkspace(io, path), inspection: prepared.inspection! })
      io.info(
        `${relativeToWorkspace(io, path)}: program ${prepared.inspection!.programHash}, output ${prepared.inspection!.output.length} words`,
      )
    }
  } finally {
    io.endGroup()
  }
  return pies
}

/** The bucket's verdict as outputs, summary rows, the per-query table and the report. */
async function reportVerdict(
  step: ProvingStep,
  bucketId: string,
  details: BucketDetailsResponse,
  verdict: BucketVerdict,
  pies: GivenPie[] | undefined,
): Promise<void> {
  const { bucketTable } = await import('../../pipeline/bucket.ts')
  step.outputs.set({
    ...bucketOutputs(details.bucket),
    leaves: String(verdict.rows.length),
    status: verdict.status,
    'gate-passed': String(verdict.ok),
    queries: JSON.stringify(verdict.rows),
  })
  step.extraRows.push(
    ['Bucket', { code: bucketId }],
    ['Status', verdict.status],
    [
      'Queries',
      `${verdict.rows.length} (${verdict.rows.filter((row) => row.problems.length === 0).length} pass the gate)`,
    ],
    [
      'Facts checked against',
      pies ? `${pies.length} PIE${pies.length === 1 ? '' : 's'}` : 'no PIEs given (`pie`): facts not checked',
    ],
    ['Mock proof', details.bucket.mockProof ? 'YES: the aggregated proof is mocked' : 'no'],
  )
  if (verdict.rows.length) step.sections.push(bucketTable(verdict.rows, 'markdown'))
  if (verdict.ok) {
    await step.report({
      outcome: 'passed',
      headline:
        verdict.rows.length === 1
          ? `Bucket ${bucketId} is DONE: its one query passed the gate${pies ? ' and its facts match the PIEs' : ''}.`
          : `Bucket ${bucketId} is DONE: all ${verdict.rows.length} queries passed the gate${pies ? ' and their facts match the PIEs' : ''}.`,
    })
    return
  }
  await step.report({
    outcome: 'failed',
    headline: `The gate refused bucket ${bucketId}.`,
    problems: verdict.refusals,
    nextSteps: [
      'A FAILED query: read its error reason in the table; if it is retriable, the `retry` sub-action can send it again.',
      'Facts that fit none of the PIEs: check that `pie` lists the same pie.zip files the jobs proved.',
      "A query missing or not expected: check that `expected-queries` lists every job's `query-id` (or their count), and that each job proved into this bucket.",
      'A query whose record names another bucket: do not rely on this bucket; check that each job proved into this `bucket-id`, and report it to the service operator.',
    ],
    failure:
      verdict.refusals.length === 1
        ? verdict.refusals[0]!
        : `${verdict.refusals[0]} (and ${verdict.refusals.length - 1} more: see the job summary)`,
  })
}

function relativeToWorkspace(io: ActionIO, path: string): string {
  const workspace = (io.env.GITHUB_WORKSPACE || process.cwd()).replace(/\/+$/, '')
  return path.startsWith(`${workspace}/`) ? path.slice(workspace.length + 1) : path
}
