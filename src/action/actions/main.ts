/**
 * The root action: pack (a directory) -> validate -> submit for L2 proof generation and
 * verification -> `query-id` at once -> wait -> check the facts locally -> gate -> outputs and
 * job summary -> (with `decommit-destination-chain-id`, once the gate passed) a decommitment
 * task for the query, with its own outputs and summary section. Never throws: every ending sets
 * the outputs known so far, writes the summary and, unless the gate passed, marks the step
 * failed.
 */
import { actionJournalDir, SubmissionJournal, submitWithJournal } from '../../pipeline/journal.ts'
import { randomBytes, randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { afterOnChainCheck, evaluateGate, expectResult, expectsProof, sameFelt } from '../../pipeline/gate.ts'
import { defineAction } from '../steps/define-action.ts'
import { booleanValue, MAIN_INPUTS, mainCrossCheck } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClient } from '../steps/lazy.ts'
import { verifyOnchain } from '../steps/onchain.ts'
import { registerOnchainSecrets } from '../steps/onchain-inputs.ts'
import { checkFactsForStep, expandPieInput, preparePieForStep } from '../steps/pie-step.ts'
import { defaultResult, deriveActionDedupId, generalFields, usesGeneralSubmission } from '../steps/general.ts'
import { startGitHub } from '../steps/github.ts'
import { mockNote, QueryStep } from '../steps/query-step.ts'
import { artifactUrl } from '../steps/summary.ts'
import type { ActionIO, InputValues } from '../types.ts'
import type { ArtifactOptions } from '../steps/artifacts.ts'
import type { ProvingClient, RetriedQuery } from '../../clients/proving.ts'
import type { PieInspection } from '../../pie/index.ts'
import type { QueryRecordL } from '../../schemas/proving.ts'
import type { PreparedPie } from '../../pipeline/prove.ts'

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
      io.warning('`mock-fact-hash` is true but `allow-mocked-fact` is false: the gate will refuse the mocked result. Set `allow-mocked-fact: true` for a dry run.')
    }
    if (inputs.emulator && !inputs.wait) {
      io.warning('`wait: false` with `emulator: true`: the emulator stops with this step, so nothing can wait for the query later.')
    }
    if (inputs['decommit-destination-chain-id'] && !inputs.wait) {
      io.warning('`decommit-destination-chain-id` with `wait: false`: the decommitment follows a DONE proof, so none is submitted. Use the `decommit` sub-action once the query is DONE.')
    }
    if (inputs['tasks-url'] && !inputs['decommit-destination-chain-id']) {
      io.warning('`tasks-url` is only used with `decommit-destination-chain-id`; it is ignored.')
    }
    // Before the emulator starts: the release's proof.json is downloaded from it after the report.
    const service = { url: inputs['base-url'] }
    const github = { subject: subjectOf(inputs), commentKey: inputs['external-id'] ?? inputs.pie?.trim() }
    if (!(await startGitHub(io, step, inputs, { ...github, serviceUrl: () => service.url, signal, allowInsecureHttp: inputs['allow-insecure-http'] === true }))) return
    // The emulator (when asked for) stops once the step has reported, however it ended.
    await prove(io, inputs, step, signal, (close, url) => {
      service.url = url
      step.onClose(close)
    })
  },
})

/** What the check run is named after: the PIE (or program) as the workflow gives it. */
function subjectOf(inputs: MainInputs): string {
  const pie = inputs.pie?.split('\n').map((line) => line.trim()).filter(Boolean)
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
  const services = await loadClient()
  const logger = loggerFor(io)
  let baseUrl = inputs['base-url']
  let apiKey = inputs['api-key']
  if (inputs.emulator) {
    // A throwaway key unless one was given: the emulator accepts what it was started with.
    apiKey ??= `emulator-${randomBytes(12).toString('hex')}`
    io.setSecret(apiKey)
    const { startEmulator } = await import('../../emulator/index.ts')
    // The emulator's own request log is debug noise in a CI log.
    const emulator = await startEmulator({ host: '127.0.0.1', port: 0, apiKeys: [apiKey], logger: { ...logger, info: logger.debug } })
    onEmulator(() => emulator.close(), emulator.url)
    baseUrl = emulator.url
    io.info(`Running against the built-in emulator at ${emulator.url}: nothing is proved or verified for real.`)
  }
  const client = services.provingClient({ baseUrl: baseUrl!, apiKey, logger, allowInsecureHttp: inputs['allow-insecure-http'] === true })

  const general = usesGeneralSubmission(inputs)
  const pieList = inputs.pie === undefined ? [] : await expandPieInput(io, inputs.pie)
  if (pieList.length > 1) {
    const { proveBatch } = await import('../steps/batch.ts')
    await proveBatch(io, step, client, inputs, pieList, signal)
    return
  }
  const pie = pieList.length
    ? await preparePieForStep(io, step, pieList[0]!, {
        signal,
        // The PIE's n_steps gives the general submission its declared job size.
        inspect: inputs['verify-facts'] || inputs['expected-program-hash'] !== undefined || (general && !inputs['declared-job-size']),
      })
    : undefined

  // The program is known before paying for a proof: refuse the wrong one now.
  const expected = inputs['expected-program-hash']
  if (expected && pie?.inspection) {
    const matches = Object.values(pie.inspection.programHashes).some((hash) => sameFelt(hash, expected))
    if (!matches) {
      await step.report({
        outcome: 'failed',
        headline: 'The PIE is not the expected program; nothing was submitted.',
        problems: [
          `The PIE's program hash is ${pie.inspection.programHash} (Pedersen; Poseidon ${pie.inspection.programHashes.poseidon}), not the expected ${expected}.`,
        ],
        nextSteps: ['Check that `pie` comes from the program you meant to release, and that `expected-program-hash` is that program\'s hash.'],
        failure: `The PIE's program hash is ${pie.inspection.programHash}, not the expected ${expected}; nothing was submitted.`,
      })
      return
    }
  }

  let provingQueryId: string
  /** Forgets the journal's entry once the query was seen DONE and gated. */
  let settleJournal: (() => Promise<void>) | undefined
  const fields = generalFields(inputs)
  // `reuse: auto`: what already proves this PIE is not paid for again (pipeline/reuse.ts).
  let reused: QueryRecordL | undefined
  if (inputs.reuse === 'auto' && pie?.inspection) {
    const found = await lookForReuse(io, step, inputs, client, { ...pie, inspection: pie.inspection }, { general, fields, signal, emulatorUrl: inputs.emulator ? baseUrl : undefined })
    if (found === 'chain') return
    reused = found
  }
  step.outputs.set({ reused: reused ? 'query' : 'false' })
  if (reused) {
    provingQueryId = reused.id
    step.reusedQuery(reused)
  } else if (general) {
    const workspace = io.env.GITHUB_WORKSPACE || process.cwd()
    const program = inputs.program === undefined ? undefined : resolve(workspace, inputs.program)
    const programInput = inputs['program-input'] === undefined ? undefined : resolve(workspace, inputs['program-input'])
    let declaredJobSize = inputs['declared-job-size'] ?? pie?.inspection?.jobSize
    if (declaredJobSize === undefined) {
      declaredJobSize = 'XS'
      io.info('`declared-job-size` is XS: there is no PIE to measure. Set it if the run has more than 6.5M steps (a too-small size fails the job).')
    }
    const subject = pie ? `pie:${pie.sha256}` : program ? `program:${await digestOf(program, programInput)}` : `hash:${inputs['program-hash']}`
    const firstDedupId =
      inputs['dedup-id'] ??
      deriveActionDedupId(io.env, subject, { ...fields, declaredJobSize, layout: inputs.layout, mockFactHash: inputs['mock-fact-hash'] })
    // A re-run of this job finds the query it already paid for: nothing is uploaded again. Unless
    // that query FAILED: then the re-run submits again, under the next dedupId of the chain (the
    // same for every re-run after that failure), and never reports the FAILED query as its own.
    step.outputs.set({ 'dedup-id': firstDedupId })
    const resolved = await client.resolveDedupId(firstDedupId, { signal })
    step.outputs.set({ 'dedup-id': resolved.dedupId })
    if (resolved.retried) step.extraRows.push(['Earlier attempt', retriedRow(resolved.retried)])
    if (resolved.failedQueryIds.length) {
      io.info(
        `Query ${resolved.failedQueryIds.join(', then ')} of an earlier attempt FAILED; ${resolved.existing ? `following query ${resolved.existing.id}, submitted after it` : 'submitting the PIE again, as a new query'} with dedup-id ${resolved.dedupId}.`,
      )
      step.extraRows.push(['Earlier attempt', `query ${resolved.failedQueryIds.join(', ')} FAILED; ${resolved.existing ? 'followed the query submitted after it' : 'submitted again'}`])
    }
    const existing = resolved.existing
    const submitted = existing
      ? { provingQueryId: existing.id, deduplicated: true, dedupId: resolved.dedupId }
      : await client.submitQuery({
      ...fields,
      declaredJobSize,
      layout: inputs.layout,
      mockFactHash: inputs['mock-fact-hash'],
      dedupId: resolved.dedupId,
      ...(pie ? { pieZip: pie.zipPath } : {}),
      ...(program ? { programFile: program } : {}),
      ...(programInput ? { inputFile: programInput } : {}),
      ...(inputs['program-hash'] ? { programHash: inputs['program-hash'] } : {}),
      signal,
    })
    provingQueryId = submitted.provingQueryId
    const dedupId = submitted.dedupId ?? resolved.dedupId
    step.outputs.set({ 'dedup-id': dedupId })
    step.submitted(provingQueryId, submitted.deduplicated ? `submitted by an earlier attempt of this job (dedup-id ${dedupId})` : undefined)
    if (submitted.deduplicated) {
      step.extraRows.push(['Deduplicated', `yes: query ${provingQueryId} was submitted by an earlier attempt; nothing was sent again`])
    }
    step.extraRows.push(['Result', fields.result], ['Dedup id', { code: dedupId }])
    if (fields.externalId) step.extraRows.push(['External id', fields.externalId])
  } else {
    const submitL2 = () =>
      client.submitPie({
        pieZip: pie!.zipPath,
        layout: inputs.layout,
        prover: inputs.prover,
        mockFactHash: inputs['mock-fact-hash'],
        signal,
      })
    // The local journal (RUNNER_TEMP, per run and attempt): a second submission of this PIE in
    // this job, after one whose outcome is unknown, is refused instead of paid for twice.
    const journalDir = inputs.emulator ? undefined : actionJournalDir(io.env)
    if (journalDir) {
      const journaled = await submitWithJournal({
        journal: new SubmissionJournal(journalDir),
        parts: {
          pieDigest: pie!.sha256,
          service: new URL(client.http.baseUrl).origin,
          endpoint: 'l2-pie',
          params: { layout: inputs.layout, prover: inputs.prover, mockFactHash: inputs['mock-fact-hash'] },
        },
        client,
        forceNew: false,
        logger,
        signal,
        timeoutMs: inputs['timeout-minutes'] * 60_000,
        factsChecked: inputs.wait && inputs['verify-facts'],
        submit: submitL2,
      })
      provingQueryId = journaled.provingQueryId
      step.submitted(provingQueryId, journaled.resumed ? 'submitted by an earlier run of this PIE in this job' : undefined)
      if (journaled.retried) step.extraRows.push(['Earlier attempt', retriedRow(journaled.retried)])
      // The id is in the outputs and the saved state now: the lock goes, the entry stays until
      // the query's outcome is seen (below), so a second run of this PIE in this job follows it.
      await journaled.keep?.()
      settleJournal = journaled.settle
    } else {
      ;({ provingQueryId } = await submitL2())
      step.submitted(provingQueryId)
    }
  }

  const bucketId = inputs['bucket-id']
  if (bucketId) {
    // The query's place in the bucket (the service assigns one when none was given).
    const placed = await client.getQuery(provingQueryId, { signal }).catch(() => undefined)
    const index = placed?.provingQuery.bucketJobIndex ?? inputs['bucket-job-index']
    step.outputs.set({ 'bucket-id': bucketId, ...(index === undefined || index === null ? {} : { 'bucket-job-index': String(index) }) })
    step.extraRows.push(['Bucket', { code: bucketId }], ['Bucket job index', index === undefined || index === null ? undefined : String(index)])
    step.facts = { kind: 'skipped', reason: 'the query ends with its bucket: `bucket-close` with `wait: true` checks it' }
    await step.report({
      outcome: 'submitted',
      headline: `Submitted query ${provingQueryId} into bucket ${bucketId}; it ends when the bucket is closed.`,
      nextSteps: ['Once every job has proved into the bucket, close it with the `bucket-close` sub-action and `wait: true` (give it the PIEs to check each query\'s facts): it gates on every query.'],
    })
    return
  }

  // What was asked for, never the record's word for it: the general submission's `result`, or
  // the L2 endpoint's kind. The `wait` step that follows or resumes the query expects it too.
  const asked = expectResult(general ? (fields.result ?? 'PROOF_GENERATION') : 'PROOF_VERIFICATION_ON_L2')
  step.expecting(asked.label)
  if (!inputs.wait) {
    step.facts = { kind: 'skipped', reason: '`wait` is false' }
    if (reused) {
      await step.report({
        outcome: 'submitted',
        headline: `Reused query ${provingQueryId}, which already proves this PIE; nothing was submitted, and it is not gated here (\`wait: false\`).`,
        nextSteps: [`Gate it with the \`wait\` sub-action, its \`query-id\` and \`expected-result: ${asked.label}\`.`],
      })
      return
    }
    await step.endWithoutWaiting(provingQueryId, `Follow the query with the \`wait\` sub-action, its \`query-id\` and \`expected-result: ${asked.label}\`; it applies the same gate.`)
    return
  }

  const result = await step.wait(client, provingQueryId, inputs['timeout-minutes'] * 60_000)
  const record = result.provingQuery
  let factCheck
  if (record.status === 'DONE' && !expectsProof(asked)) {
    step.facts = { kind: 'skipped', reason: `a ${asked.label} query generates a trace, not a proof: it has no fact` }
    io.info(`No fact to check: a ${asked.label} query generates a trace, not a proof.`)
  } else if (record.status === 'DONE' && (inputs['verify-facts'] || reused) && pie) {
    // A reused query's facts are compared again, whatever `verify-facts` says.
    factCheck = await checkFactsForStep(io, step, record, pie)
  } else {
    step.facts = {
      kind: 'skipped',
      reason: record.status !== 'DONE' ? `the query is ${record.status}` : !pie ? 'no PIE to compute them from (a program or program hash was submitted)' : '`verify-facts` is false',
    }
  }
  step.outputs.set({ 'facts-verified': String(factCheck?.ok === true) })

  const gated = evaluateGate(record, factCheck, {
    allowMockedFact: inputs['allow-mocked-fact'],
    expectedProgramHash: expected,
    expected: asked,
  })
  if (inputs['upload-artifacts']) {
    const options = { retentionDays: inputs['retention-days'], compressionLevel: inputs['compression-level'], overwrite: inputs.overwrite, allowInsecureHttp: inputs['allow-insecure-http'] === true }
    await uploadArtifacts(io, step, inputs['artifact-name'], pie?.zipPath, io.env.RUNNER_TEMP || tmpdir(), options, signal)
  }
  // An unknown mock state is what the on-chain check settles: a fact registered in the registry
  // it reads (the real one: the record does not say the fact is mocked) was verified. Every
  // other refusal stands, and stops the check.
  const firm = gated.filter((refusal) => refusal.kind !== 'mock-state-unknown')
  const onchain = await verifyOnchain(io, step, inputs, record, firm, { signal, emulatorUrl: inputs.emulator ? baseUrl : undefined })
  const refusals = afterOnChainCheck(gated, { refusals: onchain, registered: step.outputs.get('onchain-verified') === 'true' })
  const destinationChainId = inputs['decommit-destination-chain-id']
  if (destinationChainId) {
    step.extraRows.push([
      'Decommitment',
      refusals.length ? 'not submitted: the gate refused the result' : `to chain ${destinationChainId}, submitted next (see "Decommit" below)`,
    ])
  }
  await step.finishGate(
    refusals,
    `Query ${provingQueryId} is DONE${mockNote(record.isFactMocked)}${factCheck?.ok ? ', and the facts match the PIE' : ''}.`,
  )
  // DONE and gated: settled. A FAILED query's entry stays: a second run of this PIE in this job finds it FAILED, says so, and submits anew.
  if (record.status === 'DONE') await settleJournal?.()
  if (destinationChainId && refusals.length === 0) {
    // Its own summary section and outputs (task-uuid, task-status, ...); a failure fails the step,
    // and is the step's `error-reason` too.
    const { decommitAfterProof } = await import('./decommit.ts')
    // A failed (or cancelled) decommitment fails the step after its passed report: the check
    // run concludes with that, not with the gate's success.
    const failing: ActionIO = { ...io, setFailed: (message) => step.failAfterReport(message, signal.aborted) }
    await decommitAfterProof(failing, {
      // The emulator serves the task service on its own address.
      tasksUrl: inputs.emulator ? baseUrl! : inputs['tasks-url']!,
      apiKey,
      allowInsecureHttp: inputs['allow-insecure-http'] === true,
      provingQueryId,
      destinationChainId,
      wait: true,
      timeoutMinutes: inputs['timeout-minutes'],
      signal,
    })
  }
}

/**
 * `reuse: auto` before paying: with `verify-onchain`, the PIE's own fact already registered on
 * every chain asked for ends the step here, passed, with nothing submitted ('chain'); else the
 * newest DONE query of this key that proves the PIE as this submission would, to follow and
 * gate as if new; else undefined (the PIE is submitted).
 */
async function lookForReuse(
  io: ActionIO,
  step: QueryStep,
  inputs: MainInputs,
  client: ProvingClient,
  pie: PreparedPie & { inspection: PieInspection },
  options: { general: boolean; fields: ReturnType<typeof generalFields>; signal: AbortSignal; emulatorUrl: string | undefined },
): Promise<QueryRecordL | 'chain' | undefined> {
  const { alreadyOnChain } = await import('../steps/onchain.ts')
  const { describeReuse, findReusableQuery, generalReuseRequest, l2ReuseRequest } = await import('../../pipeline/reuse.ts')
  const inspection = pie.inspection
  // A mocked fact is never taken from the chain: only a real proof's registration counts.
  // A decommitment needs a query: then only a query can be reused.
  if (inputs['verify-onchain'] !== 'none' && !inputs['mock-fact-hash'] && !inputs['decommit-destination-chain-id']) {
    const facts = { sharpFactHash: inspection.sharpFactHash, integrityFactHash: inspection.integrityFactHash }
    if (await alreadyOnChain(io, step, inputs, facts, { signal: options.signal, emulatorUrl: options.emulatorUrl })) {
      step.outputs.set({ reused: 'chain', 'facts-verified': 'false' })
      step.facts = { kind: 'skipped', reason: 'no query: the fact this PIE gives is already registered on chain' }
      step.extraRows.push(['Reused', 'the fact already registered on chain (see "On chain"); nothing was submitted'])
      await step.finishGate([], 'Already proven on chain: the fact this PIE gives is registered (see "On chain"); nothing was submitted.')
      return 'chain'
    }
  }
  const allowance = {
    mockFactHash: inputs['mock-fact-hash'],
    allowMockedFact: inputs['allow-mocked-fact'],
    expectedProgramHash: inputs['expected-program-hash'],
  }
  const request = options.general
    ? generalReuseRequest({ ...options.fields, result: options.fields.result ?? defaultResult(inputs), layout: inputs.layout, dedupId: inputs['dedup-id'] }, allowance)
    : l2ReuseRequest({ ...allowance, layout: inputs.layout, prover: inputs.prover })
  // "Re-run jobs" after an attempt was stopped: its journal (RUNNER_TEMP) is gone, and the L2
  // endpoint takes no dedup id, so a query it left running is found here, waited for and judged.
  // (A general submission's derived dedup-id finds the earlier attempt's query itself.)
  const attempt = Number(io.env.GITHUB_RUN_ATTEMPT ?? '1')
  const inFlight = attempt > 1 && !options.general ? { timeoutMs: inputs['timeout-minutes'] * 60_000, sinceMs: RERUN_WINDOW_MS } : undefined
  const found = await findReusableQuery(client, inspection, request, { signal: options.signal, logger: loggerFor(io), inFlight })
  if (!found.reused) {
    io.info(`No earlier query reused: ${found.reason}.`)
    return undefined
  }
  io.info(describeReuse(found))
  return found.record
}

/**
 * How far back a re-run looks for a query an earlier attempt left running: a week (attempts of
 * a run can be re-run later; a query older than that which still runs is not an attempt's).
 */
const RERUN_WINDOW_MS = 7 * 24 * 3_600_000

/** The summary's word on a FAILED query that a re-run retried instead of paying for a new one. */
function retriedRow(retry: RetriedQuery): string {
  if (retry.byAnother) return `query ${retry.queryId} FAILED and was retried by another run; followed it, nothing new was paid for`
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
  const services = await loadClient()
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
    step.outputs.set({ 'artifact-id': uploaded.id === undefined ? undefined : String(uploaded.id), 'artifact-url': url })
    if (url) step.artifacts.push({ label: `${name} (${uploaded.files.join(', ')})`, url })
    else step.artifactNote = `uploaded as "${name}" (${uploaded.files.join(', ')})`
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]
    io.warning(`Could not upload the artifacts (${message}); the gate is not affected.`)
    step.artifactNote = `upload failed: ${message}`
  }
}

/** SHA-256 of a program file and its input: what the default dedup id knows them by. */
async function digestOf(...paths: (string | undefined)[]): Promise<string> {
  const hash = createHash('sha256')
  for (const path of paths) {
    if (path === undefined) continue
    try {
      for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
    } catch {
      // A missing file is refused by the submission itself, naming the input.
      hash.update(path)
    }
  }
  return hash.digest('hex')
}
