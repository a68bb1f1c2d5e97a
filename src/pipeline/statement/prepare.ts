/**
 * Preparing a statement before anything is paid for: its PIE packed (a directory), validated
 * and inspected, and the wrong program refused; or, for a single PIE directory to the L2
 * endpoint, packed, validated and uploaded in one pass (the upload's end held back until the
 * PIE is known valid, the right program and not proven already).
 */
import { statSync } from 'node:fs'
import type { PieInspection } from '../../pie/index.ts'
import type { GateRefusal } from '../gate.ts'
import { sameFelt } from '../gate.ts'
import { type PreparedPie, preparePie, streamPie } from '../prepared-pie.ts'
import { submitPieStreamed } from '../submit-streamed.ts'
import type { Decision } from './decide.ts'
import { forceNewHintOf, type StatementRequest, type StatementSubject } from './request.ts'
import { journalParts, type SubmitContext, type Submitted } from './submit.ts'
import { SubmissionJournal } from '../journal.ts'

/** The PIE is not the program the request expects: nothing was (or will be) submitted. */
export class NotTheExpectedProgram extends Error {
  readonly refusal: GateRefusal
  constructor(refusal: GateRefusal) {
    super(refusal.message)
    this.refusal = refusal
  }
}

/** The statement's PIE, packed and validated; undefined for a program, a program hash or a proof. */
export async function preparePieOf(
  subject: StatementSubject,
  request: StatementRequest,
  options: { signal?: AbortSignal | undefined; onProgress?: ((line: string) => void) | undefined },
): Promise<PreparedPie | undefined> {
  if (subject.kind !== 'pie') return undefined
  return preparePie(subject.path, {
    inputName: request.pieInput ?? 'pie',
    signal: options.signal,
    onProgress: options.onProgress,
    packDir: request.policy.packDir?.(),
  })
}

/**
 * The PIE's program hash in every variant the expected hash is compared with, for the lines
 * under a wrong-program refusal: a hash given in another variant (a Cairo 1 program's Poseidon)
 * is told apart from another program.
 */
export function wrongProgramDetail(inspection: PieInspection, expected: string): string {
  const variants = Object.entries(inspection.programHashes)
    .map(([variant, hash]) => `${variant.charAt(0).toUpperCase()}${variant.slice(1)} ${hash}`)
    .join('; ')
  return `The PIE's program hash is ${variants}; none is the expected ${expected}.`
}

/** The program is known before paying for a proof: the wrong one is refused now. */
export function checkExpectedProgram(pie: PreparedPie, expected: string | undefined): void {
  if (expected === undefined || !pie.inspection) return
  const hashes = pie.inspection.programHashes
  if (Object.values(hashes).some((hash) => sameFelt(hash, expected))) return
  throw new NotTheExpectedProgram({
    kind: 'program-hash',
    message: `The PIE's program hash is ${pie.inspection.programHash}, not the expected ${expected}; nothing was submitted.`,
  })
}

/**
 * One pass (pack while uploading) for a single PIE directory to the L2 endpoint, when the
 * policy asks for it; not with an on-chain policy (a fact already registered would have to cut
 * an upload started before the PIE's facts are known).
 */
export function shouldStream(request: StatementRequest, subject: StatementSubject): boolean {
  return (
    request.policy.streamDirectory === true &&
    request.subjects.length === 1 &&
    request.endpoint.kind === 'l2' &&
    request.policy.onchain === undefined &&
    subject.kind === 'pie' &&
    isDirectorySync(subject.path)
  )
}

function isDirectorySync(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * The one-pass upload of a PIE directory: the reuse decision and the program check run once the
 * PIE is known valid, before the upload's end; a query that proves it already cuts the upload.
 */
export async function submitStreamed(
  dir: string,
  request: StatementRequest,
  context: SubmitContext,
  decide: (pie: PreparedPie) => Promise<Decision>,
  onPrepared: (pie: PreparedPie) => void,
  onProgress?: (line: string) => void,
): Promise<{ submitted: Submitted; decision: Decision }> {
  const endpoint = request.endpoint
  if (endpoint.kind !== 'l2') throw new Error('only the L2 endpoint takes a streamed PIE')
  const stream = streamPie(dir, {
    inputName: request.pieInput ?? 'pie',
    signal: context.signal,
    packDir: request.policy.packDir?.(),
    onProgress,
  })
  let decision: Decision = { kind: 'submit', reason: 'reuse is off' }
  const journal = request.policy.journal
  try {
    const { submitted } = await submitPieStreamed(stream, {
      client: context.client,
      layout: endpoint.layout,
      prover: endpoint.prover,
      mockFactHash: endpoint.mockFactHash,
      signal: context.signal,
      logger: context.logger,
      reuse: async (prepared) => {
        onPrepared(prepared)
        checkExpectedProgram(prepared, request.policy.gate.expectedProgramHash)
        decision = await decide(prepared)
        if (decision.kind !== 'reuse-query') return undefined
        return { provingQueryId: decision.record.id, reused: { createdAt: decision.record.createdAt ?? null } }
      },
      journal: journal && {
        journal: new SubmissionJournal(journal.dir),
        forceNew: journal.forceNew,
        forceNewHint: forceNewHintOf(journal),
        parts: (pie) => journalParts(pie, context),
        timeoutMs: context.policy.timeoutMs,
        factsChecked: request.policy.wait && request.policy.gate.verifyFacts,
        queries: context.queries,
      },
    })
    const how = submitted.reused
      ? 'reused'
      : submitted.retried
        ? 'retried'
        : submitted.resumed
          ? 'followed'
          : 'submitted'
    return {
      decision,
      submitted: {
        queryId: submitted.provingQueryId,
        how,
        retried: submitted.retried,
        createdAt: submitted.reused?.createdAt,
        settle: submitted.settle,
        keep: submitted.keep,
      },
    }
  } catch (error) {
    // The PIE (packed into the policy's folder, or a temporary one) is the caller's to clean.
    const pie = await stream.prepared.catch(() => undefined)
    if (pie) onPrepared(pie)
    throw error
  }
}
