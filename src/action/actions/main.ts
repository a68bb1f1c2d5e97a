/**
 * The root action: pack (a directory) -> validate -> submit for L2 proof generation and
 * verification -> `query-id` at once -> wait -> check the facts locally -> gate -> outputs and
 * job summary -> (with `decommit-destination-chain-id`, once the gate passed) a decommitment
 * task for the query, with its own outputs and summary section. Never throws: every ending sets
 * the outputs known so far, writes the summary and, unless the gate passed, marks the step
 * failed.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ProvingClient, RetriedQuery } from '../../clients/proving.ts'
import { InvalidInputError } from '../../core/errors.ts'
import {
  decisionLine,
  wrongProgramDetail,
  expectedOf,
  inBucket,
  proveStatements,
  resultOf,
  type StatementEvent,
  type StatementOutcome,
  type StatementRequest,
  type Submitted,
} from '../../pipeline/statement/index.ts'
import type { ArtifactOptions } from '../steps/artifacts.ts'
import { defineAction } from '../steps/define-action.ts'
import { startGitHub } from '../steps/github.ts'
import { booleanValue, MAIN_INPUTS, mainCrossCheck } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClientModule } from '../steps/lazy.ts'
import { alreadyOnChainLines, showOnchain, showOutcomes } from '../steps/onchain.ts'
import type { OnchainOutcome } from '../../pipeline/onchain.ts'
import { registerOnchainSecrets } from '../steps/onchain-inputs.ts'
import { expandPieInput, showFacts, shownPath } from '../steps/query-pie.ts'
import { mockNote, QueryStep } from '../steps/query-step.ts'
import { mainJournalDir, mainRequest } from '../steps/statement-request.ts'
import { artifactUrl } from '../steps/summary.ts'
import type { ActionIO, InputValues } from '../types.ts'

type MainInputs = InputValues<typeof MAIN_INPUTS>

export const run = defineAction({
  inputs: MAIN_INPUTS,
  crossCheck: mainCrossCheck,
  // Besides the secret inputs themselves: the provider keys inside the RPC URLs.
  secrets: registerOnchainSecrets,
  step: (io, signal, inputs) => {
    if (!inputs) {
      const emulator = booleanValue.safeParse(io.getInput('emulator') || 'false')
      return new QueryStep(io, { action: 'Prove', signal, emulated: emulator.success ? emulator.data : undefined })
    }
    const step = new QueryStep(io, {
      action: 'Prove',
      signal,
      emulated: inputs.emulator,
      baseUrl: inputs['base-url'],
      timeoutMinutes: inputs['timeout-minutes'],
    })
    step.expectedProgramHash = inputs['expected-program-hash']
    return step
  },
  async work({ io, signal, inputs, step }) {
    if (inputs['mock-fact-hash'] && !inputs['allow-mocked-fact']) {
      io.warning(
        '`mock-fact-hash` is true but `allow-mocked-fact` is false: the gate will refuse the mocked result. Set `allow-mocked-fact: true` for a dry run.',
      )
    }
    if (inputs.emulator && !inputs.wait) {
      io.warning(
        '`wait: false` with `emulator: true`: the emulator stops with this step, so nothing can wait for the query later.',
      )
    }
    if (inputs['decommit-destination-chain-id'] && !inputs.wait) {
      io.warning(
        '`decommit-destination-chain-id` with `wait: false`: the decommitment follows a DONE proof, so none is submitted. Use the `decommit` sub-action once the query is DONE.',
      )
    }
    if (inputs['tasks-url'] && !inputs['decommit-destination-chain-id']) {
      io.warning('`tasks-url` is only used with `decommit-destination-chain-id`; it is ignored.')
    }
    // Before the emulator starts: the release's proof.json is downloaded from it after the report.
    const service = { url: inputs['base-url'] }
    const github = { subject: subjectOf(inputs), commentKey: inputs['external-id'] ?? inputs.pie?.trim() }
    if (
      !(await startGitHub(io, step, inputs, {
        ...github,
        serviceUrl: () => service.url,
        signal,
        allowInsecureHttp: inputs['allow-insecure-http'] === true,
      }))
    )
      return
    // The emulator (when asked for) stops once the step has reported, however it ended.
    await prove(io, inputs, step, signal, (close, url) => {
      service.url = url
      step.onClose(close)
    })
  },
})

/** What the check run is named after: the PIE (or program) as the workflow gives it. */
function subjectOf(inputs: MainInputs): string {
  const pie = inputs.pie
    ?.split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  if (pie?.length) return pie.length === 1 ? pie[0]! : `${pie[0]} and ${pie.length - 1} more`
  if (inputs.program) return inputs.program
  return `program ${inputs['program-hash'] ?? ''}`.trim()
}

async function prove(
  io: ActionIO,
  inputs: MainInputs,
  step: QueryStep,
  signal: AbortSignal,
  onEmulator: (close: () => Promise<void>, url: string) => void,
): Promise<void> {
  const services = await loadClientModule()
  const logger = loggerFor(io)
  let baseUrl = inputs['base-url']
  let apiKey = inputs['api-key']
  const pies = inputs.pie === undefined ? [] : await expandPieInput(io, inputs.pie)
  refuseWhatSeveralCannotDo(inputs, pies.length)
  if (inputs.emulator) {
    // A throwaway key unless one was given: the emulator accepts what it was started with.
    apiKey ??= `emulator-${randomBytes(12).toString('hex')}`
    io.setSecret(apiKey)
    const { startEmulator } = await import('../../emulator/index.ts')
    // The emulator's own request log is debug noise in a CI log.
    const emulator = await startEmulator({
      host: '127.0.0.1',
      port: 0,
      apiKeys: [apiKey],
      logger: { ...logger, info: logger.debug },
    })
    onEmulator(() => emulator.close(), emulator.url)
    baseUrl = emulator.url
    io.info(`Running against the built-in emulator at ${emulator.url}: nothing is proved or verified for real.`)
  }
  const client = services.provingClient({
    baseUrl: baseUrl!,
    apiKey,
    logger,
    allowInsecureHttp: inputs['allow-insecure-http'] === true,
  })
  // The journal outlives the attempt through the Actions cache: a re-run reads back what an
  // earlier attempt left (before the request: its PIEs need no lookup), and it is saved when the
  // step ends, however it ends (the post step saves it when the step was stopped first).
  const journalDir = mainJournalDir(io, inputs)
  const carried =
    journalDir === undefined
      ? undefined
      : await (await import('../steps/journal-cache.ts')).carryJournal(io, inputs, journalDir, signal)
  const request = mainRequest(io, inputs, pies, inputs.emulator ? baseUrl : undefined, carried?.known)
  try {
    await proveRequest(io, inputs, step, signal, { client, request, apiKey, baseUrl, observe: carried?.observe })
  } finally {
    // A plan writes nothing: what it read back is only read (the next real step saves).
    if (!inputs['dry-run']) await carried?.save()
  }
}

/** The request through the pipeline: several PIEs as a batch, one with its own report. */
async function proveRequest(
  io: ActionIO,
  inputs: MainInputs,
  step: QueryStep,
  signal: AbortSignal,
  context: {
    client: ProvingClient
    request: StatementRequest
    apiKey: string | undefined
    baseUrl: string | undefined
    observe: ((event: StatementEvent) => void) | undefined
  },
): Promise<void> {
  const { client, request, apiKey, baseUrl, observe } = context
  const logger = loggerFor(io)
  if (inputs['dry-run']) {
    const { showPlan } = await import('../steps/plan.ts')
    await showPlan(io, step, client, request, signal)
    return
  }
  if (request.subjects.length > 1) {
    const { proveBatch } = await import('../steps/batch.ts')
    await proveBatch(io, step, client, inputs, request, signal, observe)
    return
  }
  const pies = request.subjects.filter((subject) => subject.kind === 'pie')
  if (request.endpoint.kind === 'general' && !pies.length && !inputs['declared-job-size']) {
    io.info(
      '`declared-job-size` is XS: there is no PIE to measure. Set it if the run has more than 6.5M steps (a too-small size fails the job).',
    )
  }
  const expected = expectedOf(request.endpoint)
  if (!inBucket(request.endpoint)) step.expecting(expected.label)
  const timeoutMs = inputs['timeout-minutes'] * 60_000
  const [outcome] = await proveStatements(request, {
    client,
    logger,
    signal,
    hooks: {
      onEvent: (event) => {
        observe?.(event)
        showEvent(io, step, request, event)
      },
      onPrepareProgress: (_, line) => io.info(line),
      aroundWait: (_, queryId, wait) => step.showWait(queryId, timeoutMs, wait),
      onOnchainProgress: (_, line) => io.info(line),
    },
  })
  await showOne(io, step, inputs, request, outcome!, { apiKey, baseUrl, signal })
}

/** What the root action does for one PIE only, refused before anything is read or sent when several are given. */
function refuseWhatSeveralCannotDo(inputs: MainInputs, count: number): void {
  if (count <= 1) return
  if (inputs['decommit-destination-chain-id'] !== undefined) {
    throw new InvalidInputError(
      `\`decommit-destination-chain-id\` follows one proof, and \`pie\` names ${count} PIEs: prove them here, then decommit each query with the \`decommit\` sub-action and its \`query-id\`.`,
      { input: 'decommit-destination-chain-id' },
    )
  }
  for (const name of ['release-tag', 'attest'] as const) {
    if (inputs[name] === undefined || inputs[name] === false) continue
    throw new InvalidInputError(
      `\`${name}\` publishes one PIE's pie.zip and facts, and \`pie\` names ${count} PIEs: prove each release's PIE in a step of its own to publish it.`,
      { input: name },
    )
  }
  if (inputs['upload-artifacts']) {
    throw new InvalidInputError(
      `\`upload-artifacts\` uploads one PIE's pie.zip and proof.json, and \`pie\` names ${count} PIEs: leave it out here.`,
      {
        input: 'upload-artifacts',
        metaMessages: ['Upload the files with actions/upload-artifact: each row of `results` names its PIE and query.'],
      },
    )
  }
}

/** The lines, outputs and summary rows of one statement's steps, as they happen. */
function showEvent(io: ActionIO, step: QueryStep, request: StatementRequest, event: StatementEvent): void {
  if (event.type === 'prepared') {
    const pie = event.pie
    const subject = request.subjects[event.index]!
    const workspace = io.env.GITHUB_WORKSPACE || process.cwd()
    step.pie = {
      zipPath: pie.zipPath,
      sha256: pie.sha256,
      shown: shownPath(workspace, subject.kind === 'pie' ? subject.path : pie.zipPath, pie.packed),
    }
    step.outputs.set({ 'pie-zip': pie.zipPath, 'pie-sha256': pie.sha256 })
    if (pie.inspection) {
      step.localProgramHash = pie.inspection.programHash
      step.outputs.set({ 'program-hash': pie.inspection.programHash })
    }
  } else if (event.type === 'decided') {
    const line = decisionLine(event.decision)
    if (line) io.info(line)
  } else if (event.type === 'submitted' && event.submitted.queryId) {
    showSubmitted(step, request, event.submitted)
  }
}

function showSubmitted(step: QueryStep, request: StatementRequest, submitted: Submitted): void {
  step.outputs.set({ reused: submitted.how === 'reused' ? 'query' : 'false' })
  if (submitted.how === 'reused') {
    step.reusedQuery({ id: submitted.queryId, createdAt: submitted.createdAt })
    return
  }
  if (submitted.retried) step.extraRows.push(['Earlier attempt', retriedRow(submitted.retried)])
  const endpoint = request.endpoint
  if (endpoint.kind !== 'general') {
    step.submitted(
      submitted.queryId,
      submitted.how === 'submitted' ? undefined : 'submitted by an earlier run of this PIE in this job',
    )
    return
  }
  const dedupId = submitted.dedupId
  step.outputs.set({ 'dedup-id': dedupId })
  if (submitted.failedQueryIds?.length) {
    step.extraRows.push([
      'Earlier attempt',
      `query ${submitted.failedQueryIds.join(', ')} FAILED; ${submitted.deduplicated ? 'followed the query submitted after it' : 'submitted again'}`,
    ])
  }
  step.submitted(
    submitted.queryId,
    submitted.deduplicated ? `submitted by an earlier attempt of this job (dedup-id ${dedupId})` : undefined,
  )
  if (submitted.deduplicated) {
    step.extraRows.push([
      'Deduplicated',
      `yes: query ${submitted.queryId} was submitted by an earlier attempt; nothing was sent again`,
    ])
  }
  step.extraRows.push(
    ['Result', resultOf(endpoint)],
    ['Dedup id', dedupId === undefined ? undefined : { code: dedupId }],
  )
  if (endpoint.fields.externalId) step.extraRows.push(['External id', endpoint.fields.externalId])
}

type Service = { apiKey: string | undefined; baseUrl: string | undefined; signal: AbortSignal }

/** One statement's ending: the report, the artifacts, the decommitment. */
async function showOne(
  io: ActionIO,
  step: QueryStep,
  inputs: MainInputs,
  request: StatementRequest,
  outcome: StatementOutcome,
  service: Service,
): Promise<void> {
  if (outcome.error !== undefined) throw outcome.error
  if (outcome.ending === 'not-submitted') return showNotTheProgram(step, inputs, outcome)
  const decision = outcome.decision
  if (decision?.kind === 'reuse-chain') return showReusedFromChain(io, step, decision.outcomes)
  const queryId = outcome.submitted!.queryId
  if (outcome.bucket) return showInBucket(step, queryId, outcome.bucket)
  const expected = expectedOf(request.endpoint)
  const judgement = outcome.judgement
  if (!judgement) return showNotWaited(step, queryId, outcome.submitted?.how === 'reused', expected.label)
  showFacts(io, step, judgement, {
    expectedLabel: expected.label,
    noPie: 'no PIE to compute them from (a program or program hash was submitted)',
  })
  if (inputs['upload-artifacts']) {
    const options = {
      retentionDays: inputs['retention-days'],
      compressionLevel: inputs['compression-level'],
      overwrite: inputs.overwrite,
      allowInsecureHttp: inputs['allow-insecure-http'] === true,
    }
    await uploadArtifacts(
      io,
      step,
      inputs['artifact-name'],
      outcome.pie?.zipPath,
      io.env.RUNNER_TEMP || tmpdir(),
      options,
      service.signal,
    )
  }
  await showOnchain(step, judgement.onchain, request.policy.onchain !== undefined)
  const refusals = judgement.refusals
  const destinationChainId = inputs['decommit-destination-chain-id']
  if (destinationChainId) {
    step.extraRows.push([
      'Decommitment',
      refusals.length
        ? 'not submitted: the gate refused the result'
        : `to chain ${destinationChainId}, submitted next (see "Decommit" below)`,
    ])
  }
  const record = judgement.result.provingQuery
  await step.finishGate(
    refusals,
    `Query ${queryId} is DONE${mockNote(record.isFactMocked)}${judgement.factCheck?.ok ? ', and the facts match the PIE' : ''}.`,
  )
  if (destinationChainId && refusals.length === 0)
    await decommitProven(io, step, inputs, service, queryId, destinationChainId)
}

/** The wrong program: refused before anything was paid for. */
async function showNotTheProgram(step: QueryStep, inputs: MainInputs, outcome: StatementOutcome): Promise<void> {
  const inspection = outcome.pie?.inspection
  await step.report({
    outcome: 'failed',
    headline: 'The PIE is not the expected program; nothing was submitted.',
    // The variants the PIE gives, beside the one a workflow writes (Pedersen, SHARP's default).
    problems: inspection
      ? [wrongProgramDetail(inspection, inputs['expected-program-hash'] ?? '')]
      : outcome.refusals.map((refusal) => refusal.message),
    nextSteps: [
      "Check that `pie` comes from the program you meant to release, and that `expected-program-hash` is that program's hash.",
    ],
    failure: outcome.refusals[0]!.message,
  })
}

/** The fact the PIE gives is registered on chain already: no query, the on-chain check is the gate. */
async function showReusedFromChain(io: ActionIO, step: QueryStep, outcomes: OnchainOutcome[]): Promise<void> {
  for (const line of await alreadyOnChainLines(outcomes)) io.info(line)
  step.outputs.set({ reused: 'chain', 'facts-verified': 'false' })
  step.facts = { kind: 'skipped', reason: 'no query: the fact this PIE gives is already registered on chain' }
  await showOutcomes(step, outcomes, 0)
  step.extraRows.push(['Reused', 'the fact already registered on chain (see "On chain"); nothing was submitted'])
  await step.finishGate(
    [],
    'Already proven on chain: the fact this PIE gives is registered (see "On chain"); nothing was submitted.',
  )
}

/** A query into a bucket: it ends when the bucket is closed, which gates it. */
async function showInBucket(
  step: QueryStep,
  queryId: string,
  bucket: { bucketId: string; bucketJobIndex?: number | undefined },
): Promise<void> {
  const { bucketId, bucketJobIndex } = bucket
  const index = bucketJobIndex === undefined ? undefined : String(bucketJobIndex)
  step.outputs.set({ 'bucket-id': bucketId, ...(index === undefined ? {} : { 'bucket-job-index': index }) })
  step.extraRows.push(['Bucket', { code: bucketId }], ['Bucket job index', index])
  step.facts = { kind: 'skipped', reason: 'the query ends with its bucket: `bucket-close` with `wait: true` checks it' }
  await step.report({
    outcome: 'submitted',
    headline: `Submitted query ${queryId} into bucket ${bucketId}; it ends when the bucket is closed.`,
    nextSteps: [
      "Once every job has proved into the bucket, close it with the `bucket-close` sub-action and `wait: true` (give it the PIEs to check each query's facts): it gates on every query.",
    ],
  })
}

/** `wait: false`: the query is submitted (or reused) and not gated here. */
async function showNotWaited(step: QueryStep, queryId: string, reused: boolean, expectedLabel: string): Promise<void> {
  step.facts = { kind: 'skipped', reason: '`wait` is false' }
  if (reused) {
    await step.report({
      outcome: 'submitted',
      headline: `Reused query ${queryId}, which already proves this PIE; nothing was submitted, and it is not gated here (\`wait: false\`).`,
      nextSteps: [`Gate it with the \`wait\` sub-action, its \`query-id\` and \`expected-result: ${expectedLabel}\`.`],
    })
    return
  }
  await step.endWithoutWaiting(
    queryId,
    `Follow the query with the \`wait\` sub-action, its \`query-id\` and \`expected-result: ${expectedLabel}\`; it applies the same gate.`,
  )
}

/**
 * The decommitment after a passed gate: its own summary section and outputs (task-uuid,
 * task-status, ...). A failed (or cancelled) decommitment fails the step after its passed report:
 * the check run concludes with that, not with the gate's success, and it is the step's
 * `error-reason` too.
 */
async function decommitProven(
  io: ActionIO,
  step: QueryStep,
  inputs: MainInputs,
  service: Service,
  queryId: string,
  destinationChainId: string,
): Promise<void> {
  const { decommitAfterProof } = await import('./decommit.ts')
  const failing: ActionIO = { ...io, setFailed: (message) => step.failAfterReport(message, service.signal.aborted) }
  await decommitAfterProof(failing, {
    // The emulator serves the task service on its own address.
    tasksUrl: inputs.emulator ? service.baseUrl! : inputs['tasks-url']!,
    apiKey: service.apiKey,
    allowInsecureHttp: inputs['allow-insecure-http'] === true,
    provingQueryId: queryId,
    destinationChainId,
    wait: true,
    timeoutMinutes: inputs['timeout-minutes'],
    signal: service.signal,
  })
}

/** The summary's word on a FAILED query that a re-run retried instead of paying for a new one. */
function retriedRow(retry: RetriedQuery): string {
  if (retry.byAnother)
    return `query ${retry.queryId} FAILED and was retried by another run; followed it, nothing new was paid for`
  const which = retry.retryCount === undefined ? '' : ` (retry ${retry.retryCount} of 3)`
  return `query ${retry.queryId} FAILED with a retriable error; retried it${which}, nothing new was paid for`
}

/** pie.zip and proof.json as one artifact; a failure warns and never fails the gate. */
async function uploadArtifacts(
  io: ActionIO,
  step: QueryStep,
  name: string,
  pieZip: string | undefined,
  runnerTemp: string,
  options: ArtifactOptions,
  signal: AbortSignal,
): Promise<void> {
  const services = await loadClientModule()
  const folder = join(runnerTemp, 'proving-kit', `artifact-${randomUUID()}`)
  const files = pieZip ? [pieZip] : []
  try {
    const { mkdir } = await import('node:fs/promises')
    await mkdir(join(folder, 'download'), { recursive: true })
    const proof = step.proofJson(join(folder, 'download', 'proof.json'), (url, path) =>
      services.downloadFile(url, path, signal, { allowInsecureHttp: options.allowInsecureHttp }),
    )
    if (proof) {
      files.push(await proof)
    } else if (step.record?.status === 'DONE') {
      io.warning('The query lists no proof.json among its metadata URLs; uploading pie.zip alone.')
    }
    const { uploadArtifact } = await import('../steps/artifacts.ts')
    const uploaded = await uploadArtifact(name, files, join(folder, 'upload'), options)
    io.info(`Uploaded artifact "${name}" (${uploaded.files.join(', ')}).`)
    const url = uploaded.id === undefined ? undefined : artifactUrl(io.env, uploaded.id)
    step.outputs.set({
      'artifact-id': uploaded.id === undefined ? undefined : String(uploaded.id),
      'artifact-url': url,
    })
    if (url) step.artifacts.push({ label: `${name} (${uploaded.files.join(', ')})`, url })
    else step.artifactNote = `uploaded as "${name}" (${uploaded.files.join(', ')})`
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]
    io.warning(`Could not upload the artifacts (${message}); the gate is not affected.`)
    step.artifactNote = `upload failed: ${message}`
  }
}
