import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { type EmulatorContext, publicBaseUrl } from '../context.ts'
import { PROVING_QUERY_NOT_FOUND } from '../errors.ts'
import { BOOTLOADER_PROGRAM_HASH } from './facts.ts'
import type { Progress } from './lifecycle.ts'
import { queryProgress } from './queries.ts'
import type { Route, RouteContext } from '../router.ts'
import { own, type StoredQuery } from '../state.ts'

/**
 * A DONE query's artifacts, served by the emulator itself without authentication (as the
 * service documents metadataUrls): the proof, the uploaded pie.zip and the metadata.
 */

export const ARTIFACTS_PREFIX = '/_emulator/artifacts'

const ARTIFACT_NOT_FOUND = { message: 'ARTIFACT_NOT_FOUND' } as const
const ARTIFACT_NOT_READY = { message: 'ARTIFACT_NOT_READY' } as const

/** The artifact URLs of a query: none until it is DONE; the pie only when one was uploaded. */
export function metadataUrlsOf(baseUrl: string, query: StoredQuery, progress: Progress): string[] {
  if (progress.status !== 'DONE') return []
  const base = `${baseUrl}${ARTIFACTS_PREFIX}/${encodeURIComponent(query.id)}`
  const urls = [`${base}/proof.json`]
  if (query.files.pie) urls.push(`${base}/pie.cairo0.zip`)
  urls.push(`${base}/metadata.json`)
  return urls
}

export function artifactUrls(
  emulator: EmulatorContext,
  ctx: RouteContext,
  query: StoredQuery,
  progress: Progress,
): string[] {
  return metadataUrlsOf(publicBaseUrl(emulator, ctx), query, progress)
}

/**
 * metadata.json: the PIE is proved inside the bootloader, so `program_hash` is the bootloader's,
 * `child_program_hash` the PIE's own, and `output` the bootloader's output
 * `[1, len(output) + 2, child_program_hash, ...output]` (the words the Integrity fact hashes),
 * as 0x-hex strings so no reader rounds them.
 */
export function metadataOf(query: StoredQuery): {
  program_hash: string
  child_program_hash: string | null
  output: string[]
} {
  const child = query.facts.programHash
  const output = query.facts.output ?? []
  return {
    program_hash: BOOTLOADER_PROGRAM_HASH,
    child_program_hash: child,
    output: child === null ? [] : ['0x1', `0x${(output.length + 2).toString(16)}`, child, ...output],
  }
}

/** An emulated proof: recognisably not a real one, stable for a given query and run. */
export function proofOf(query: StoredQuery) {
  const seed = createHash('sha256').update(`proof:${query.id}:${query.retryCount}`).digest('hex')
  return {
    emulated: true,
    note: 'Written by the proving-kit emulator; not a STARK proof.',
    queryId: query.id,
    layout: query.layout,
    public_input: {
      layout: query.layout,
      n_steps: query.facts.nSteps,
      program_hash: query.facts.programHash,
      output: query.facts.output ?? [],
    },
    proof_hex: `0x${seed.repeat(4)}`,
  }
}

export function artifactRoutes(emulator: EmulatorContext): Route[] {
  return [{ method: 'GET', pattern: `${ARTIFACTS_PREFIX}/:id/:name`, handler: getArtifact }]

  function getArtifact(ctx: RouteContext) {
    const state = emulator.store.state
    const query = own(state.queries, ctx.params.id)
    if (!query) return { status: 404, body: PROVING_QUERY_NOT_FOUND }
    const name = ctx.params.name
    if (name !== 'proof.json' && name !== 'metadata.json' && !(name === 'pie.cairo0.zip' && query.files.pie)) {
      return { status: 404, body: ARTIFACT_NOT_FOUND }
    }
    if (queryProgress(state, query, emulator.clock.now()).status !== 'DONE')
      return { status: 404, body: ARTIFACT_NOT_READY }
    if (name === 'proof.json') return { status: 200, body: proofOf(query) }
    if (name === 'metadata.json') return { status: 200, body: metadataOf(query) }
    return {
      status: 200,
      file: { path: join(emulator.uploadsDir, query.id, query.files.pie!.name), contentType: 'application/zip' },
      headers: { 'content-length': String(query.files.pie!.size) },
    }
  }
}
