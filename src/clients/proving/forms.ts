/**
 * The forms the submissions send, checked before anything is: what each option means, which
 * combinations production refuses, and the files, which must exist.
 */
import { stat } from 'node:fs/promises'
import { InvalidInputError } from '../../core/errors.ts'
import { checkEnum, checkInteger, checkOpenEnum } from '../../core/checks.ts'
import type { MultipartFields } from '../../core/multipart.ts'
import { sha256File } from '../../pie/shared/index.ts'
import {
  CAIRO_VERSIONS,
  CAIRO_VMS,
  type CairoVersion,
  type CairoVm,
  type Hint,
  HINTS,
  JOB_SIZES,
  type JobSize,
  type L2Layout,
  type Layout,
  layoutProblem,
  MEMORY_VERIFICATIONS,
  type MemoryVerification,
  NETWORKS,
  type ProvingNetwork,
  RESULTS,
  type ResultKind,
  SHARP_PROVERS,
  type SharpProver,
  STONE_VERSIONS,
  type StoneVersion,
} from '../../schemas/proving-constants.ts'
import { deriveDedupId } from './dedup.ts'
import type { ProvingService } from './service.ts'

/** What {@link ProvingClient.submitPie} sends. */
export type SubmitPieOptions = {
  /** Path of the pie.zip to upload; streamed from disk. */
  pieZip: string
  /**
   * The Cairo layout to prove with; one of `L2_LAYOUTS`, another is refused before anything is sent.
   * @default 'auto'
   */
  layout?: L2Layout | undefined
  /**
   * The prover the service runs (the service's name for it).
   * @default 'svc_sharp'
   */
  prover?: string | undefined
  /**
   * Asks for a mocked fact: nothing is proved, nothing is paid for, the fact is not registered (for tests).
   * @default false
   */
  mockFactHash?: boolean | undefined
  /** Cancels the upload (the promise rejects with AbortedError; the query may exist anyway). */
  signal?: AbortSignal | undefined
  /** Called as the upload's bytes leave (for a progress line); not called when nothing is sent. */
  onUploadProgress?: ((progress: UploadProgress) => void) | undefined
}

/** How much of the uploaded files has left so far, of their sizes together (the multipart framing around them not counted). */
export type UploadProgress = { sentBytes: number; totalBytes: number }

/** What {@link ProvingClient.submitPieStream} sends: {@link SubmitPieOptions} with the bytes instead of the file. */
export type SubmitPieStreamOptions = Omit<SubmitPieOptions, 'pieZip' | 'onUploadProgress'> & {
  /**
   * The pie.zip's bytes as they are produced (e.g. by the packer). Should the iterable throw,
   * the upload is cut before the body's end: the service never gets a complete form.
   */
  pieBytes: AsyncIterable<Uint8Array>
}

/** What {@link ProvingClient.submitProofVerification} sends. */
export type SubmitProofOptions = {
  /** Path of the proof JSON file. */
  proof: string
  /** The Stone prover version that made the proof: one of `STONE_VERSIONS`. */
  stoneVersion: StoneVersion
  /** How the proof checks memory: one of `MEMORY_VERIFICATIONS`. */
  memoryVerification: MemoryVerification
  /**
   * Asks for a mocked fact (for tests).
   * @default false
   */
  mockFactHash?: boolean | undefined
  /** Cancels the upload (the promise rejects with AbortedError; the query may exist anyway). */
  signal?: AbortSignal | undefined
}

/**
 * What {@link ProvingClient.submitQuery} sends: exactly one of `pieZip`, `programFile` and
 * `programHash`, and the query's settings.
 */
export type SubmitQueryOptions = {
  /** The job size the query is billed and scheduled as: one of `JOB_SIZES` (`jobSizeForSteps` gives a PIE's). */
  declaredJobSize: JobSize
  /** Path of a pie.zip to prove. */
  pieZip?: string | undefined
  /** A compiled program (JSON), with an optional inputFile. */
  programFile?: string | undefined
  /**
   * The program's input: JSON for cairo0 (sent as input.json, python VM only), text for cairo1
   * (sent as input.txt, text/plain), as production requires.
   */
  inputFile?: string | undefined
  /** The hash of a program the service already knows (0x hex, at most 64 digits). */
  programHash?: string | undefined
  /**
   * The Cairo layout: one of `LAYOUTS`; another is refused before anything is sent.
   * @default 'auto'
   */
  layout?: Layout | undefined
  /**
   * The Cairo VM that runs the program (cairo1 runs on rust only).
   * @default 'rust'
   */
  cairoVm?: CairoVm | undefined
  /**
   * The program's Cairo version.
   * @default 'cairo0'
   */
  cairoVersion?: CairoVersion | undefined
  /**
   * What the query produces, from a trace to a proof verified on a chain: one of `RESULTS`.
   * @default 'PROOF_GENERATION'
   */
  result?: ResultKind | undefined
  /**
   * Asks for a mocked fact (for tests).
   * @default false
   */
  mockFactHash?: boolean | undefined
  /**
   * Where the result goes.
   * @default 'TESTNET'
   */
  network?: ProvingNetwork | undefined
  /** The SHARP prover: `stone` or `stwo`; another value is sent as given, with a warning. */
  sharpProver?: SharpProver | (string & {}) | undefined
  /** One of `HINTS` (svc_evm_grower, svc_sn_grower); another value is sent with a warning. */
  hints?: Hint | (string & {}) | undefined
  /** Your own identifier of the query, kept on its record. */
  externalId?: string | undefined
  /** The bucket the query joins (see {@link ProvingClient.createBucket}); it is proved when the bucket is closed. */
  bucketId?: string | undefined
  /** The query's position in its bucket (0 to 2^31 - 1). */
  bucketJobIndex?: number | undefined
  /**
   * Identifies this submission so a resubmission after a lost answer is safe (at most 128
   * characters). Derived from the file's digest and the options when omitted.
   */
  dedupId?: string | undefined
  /** Cancels the submission (the promise rejects with AbortedError; the query may exist anyway). */
  signal?: AbortSignal | undefined
  /** Called as the upload's bytes leave (for a progress line). */
  onUploadProgress?: ((progress: UploadProgress) => void) | undefined
}

/** A layout, checked against the list of the endpoint it goes to (layoutProblem). */
export function checkLayout(value: string | undefined, endpoint: 'l2', name?: string): L2Layout
export function checkLayout(value: string | undefined, endpoint: 'l2' | 'general', name?: string): Layout
export function checkLayout(value: string | undefined, endpoint: 'l2' | 'general', name = 'layout'): Layout {
  const layout = (value ?? 'auto').trim()
  const problem = layoutProblem(layout, endpoint, name)
  if (problem) throw new InvalidInputError(problem, { input: name })
  return layout as Layout
}

/** The text fields of a PIE submission, checked (the same for a file and for bytes in flight). */
export function pieForm(options: SubmitPieStreamOptions | SubmitPieOptions): {
  mockFactHash: string
  prover: string
  layout: string
} {
  const layout = checkLayout(options.layout, 'l2')
  const prover = (options.prover ?? 'svc_sharp').trim()
  if (!prover) throw new InvalidInputError('prover must not be empty; omit it to use svc_sharp.', { input: 'prover' })
  return { mockFactHash: String(options.mockFactHash ?? false), prover, layout }
}

/** The general submission's form (POST /proving-query): its fields and files, and the dedupId it goes under. */
export async function queryForm(
  service: ProvingService,
  options: SubmitQueryOptions,
): Promise<{ parts: MultipartFields; dedupId: string }> {
  const declaredJobSize = checkEnum(options.declaredJobSize, 'declaredJobSize', JOB_SIZES)
  const sources = [options.pieZip, options.programFile, options.programHash].filter((value) => value !== undefined)
  if (sources.length !== 1) {
    throw new InvalidInputError('Give exactly one of pieZip, programFile or programHash to submit a query.', {
      input: 'pieZip',
    })
  }
  if (options.inputFile !== undefined && options.programFile === undefined) {
    throw new InvalidInputError('inputFile goes with programFile; give programFile too or drop inputFile.', {
      input: 'inputFile',
    })
  }
  if (options.bucketJobIndex !== undefined) {
    checkInteger(options.bucketJobIndex, 'bucketJobIndex', 0, 2_147_483_647)
  }
  const logger = service.http.logger
  const cairoVm = checkEnum(options.cairoVm ?? 'rust', 'cairoVm', CAIRO_VMS)
  const cairoVersion = checkEnum(options.cairoVersion ?? 'cairo0', 'cairoVersion', CAIRO_VERSIONS)
  refuseWhatProductionRefuses({ cairoVm, cairoVersion, hasInputFile: options.inputFile !== undefined })
  const parts: MultipartFields = {
    declaredJobSize,
    layout: checkLayout(options.layout, 'general'),
    cairoVm,
    cairoVersion,
    result: checkEnum(options.result ?? 'PROOF_GENERATION', 'result', RESULTS),
    mockFactHash: String(options.mockFactHash ?? false),
    network: checkEnum(options.network ?? 'TESTNET', 'network', NETWORKS),
  }
  if (options.sharpProver !== undefined)
    parts.sharpProver = checkOpenEnum(options.sharpProver, 'sharpProver', SHARP_PROVERS, logger)
  if (options.hints !== undefined) parts.hints = checkOpenEnum(options.hints, 'hints', HINTS, logger)
  if (options.externalId !== undefined) parts.externalId = options.externalId
  if (options.bucketId !== undefined) parts.bucketId = options.bucketId
  if (options.bucketJobIndex !== undefined) parts.bucketJobIndex = String(options.bucketJobIndex)
  let digestSource: string
  if (options.pieZip !== undefined) {
    await requireFile(options.pieZip, 'pieZip')
    parts.pieFile = { path: options.pieZip, fileName: 'pie.zip', contentType: 'application/zip' }
    digestSource = await sha256File(options.pieZip)
  } else if (options.programFile !== undefined) {
    await requireFile(options.programFile, 'programFile')
    parts.programFile = { path: options.programFile, fileName: 'program.json', contentType: 'application/json' }
    digestSource = await sha256File(options.programFile)
    if (options.inputFile !== undefined) {
      await requireFile(options.inputFile, 'inputFile')
      // production.md: cairo1 input is text (input.txt), cairo0 input JSON.
      parts.inputFile =
        cairoVersion === 'cairo1'
          ? { path: options.inputFile, fileName: 'input.txt', contentType: 'text/plain' }
          : { path: options.inputFile, fileName: 'input.json', contentType: 'application/json' }
      digestSource += await sha256File(options.inputFile)
    }
  } else {
    const programHash = options.programHash!.trim()
    if (!/^0x[0-9a-fA-F]{1,64}$/.test(programHash)) {
      throw new InvalidInputError(
        `programHash must be a 0x-prefixed hexadecimal hash of at most 64 digits; got ${JSON.stringify(programHash.slice(0, 80))}.`,
        { input: 'programHash' },
      )
    }
    parts.programHash = programHash
    digestSource = programHash
  }
  const dedupId = options.dedupId ?? deriveDedupId(digestSource, parts)
  if (dedupId.length > 128) {
    throw new InvalidInputError('dedupId is longer than 128 characters; use a shorter identifier.', {
      input: 'dedupId',
    })
  }
  parts.dedupId = dedupId
  return { parts, dedupId }
}

/**
 * The combinations production refuses, refused here before anything is sent,
 * with the service's code in the message so either refusal reads the same.
 */
function refuseWhatProductionRefuses(choice: { cairoVm: string; cairoVersion: string; hasInputFile: boolean }): void {
  if (choice.cairoVersion === 'cairo1' && choice.cairoVm === 'python') {
    throw new InvalidInputError(
      'cairoVersion cairo1 does not run on the python VM (CAIRO1_IS_NOT_SUPPORTED_FOR_PYTHON); use cairoVm rust.',
      { input: 'cairoVm', code: 'CAIRO1_IS_NOT_SUPPORTED_FOR_PYTHON' },
    )
  }
  if (choice.hasInputFile && choice.cairoVersion === 'cairo0' && choice.cairoVm === 'rust') {
    throw new InvalidInputError(
      'An inputFile with cairo0 is not accepted on the rust VM (INPUT_FILE_IS_NOT_SUPPORTED_FOR_CAIRO0_AND_RUST_VM); use cairoVm python, or submit a PIE.',
      { input: 'inputFile', code: 'INPUT_FILE_IS_NOT_SUPPORTED_FOR_CAIRO0_AND_RUST_VM' },
    )
  }
}

export async function requireFile(path: string, name: string): Promise<void> {
  let info
  try {
    info = await stat(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new InvalidInputError(
      code === 'ENOENT'
        ? `${name}: no file at ${path}; check the path.`
        : `${name}: cannot read ${path} (${code ?? 'error'}); check the path and its permissions.`,
      { input: name, cause: error },
    )
  }
  if (!info.isFile())
    throw new InvalidInputError(`${name}: ${path} is not a file; give the path of a file.`, { input: name })
}

/** The form of a proof verification (POST /v1/l2/proving-query/proof-verification). */
export async function proofForm(options: SubmitProofOptions): Promise<MultipartFields> {
  const stoneVersion = checkEnum(options.stoneVersion, 'stoneVersion', STONE_VERSIONS)
  const memoryVerification = checkEnum(options.memoryVerification, 'memoryVerification', MEMORY_VERIFICATIONS)
  await requireFile(options.proof, 'proof')
  return {
    proofFile: { path: options.proof, fileName: 'proof.json', contentType: 'application/json' },
    mockFactHash: String(options.mockFactHash ?? false),
    stoneVersion,
    memoryVerification,
  }
}
