/**
 * Validating a PIE against every rule of the Cairo PIE format (cairo-lang's validity checks plus a
 * few cheap extras), in one streaming pass: the JSON files are read whole (they are small),
 * memory.bin is inflated and scanned chunk by chunk, keeping only a one-bit-per-cell bitmap for
 * duplicate addresses and the program and output segments' values. Every broken rule becomes
 * one line naming the file, the rule and the offending value or byte offset.
 */
import { AbortedError, InvalidPieError } from '../../core/errors.ts'
import { ZipFormatError, openPie, type PieEntrySummary, type PieInput, type PieSource } from '../read/index.ts'
import {
  ADDITIONAL_DATA,
  EXECUTION_RESOURCES,
  BUILTIN_ORDER,
  MEMORY,
  METADATA,
  TWO_POW_30,
  VERSION,
  FactTopologyError,
  walkFactTree,
  type PieEntryName,
} from '../shared/index.ts'
import {
  PieBudgetError,
  budgetError,
  checkJsonEntrySize,
  JSON_ENTRY_BYTES,
  OUTPUT_CELLS,
  REWRITTEN_CELLS,
  PIE_JSON_BUDGET,
  SEEN_CELLS_BASE_BYTES,
  SEEN_CELLS_BYTES_PER_CELL,
  SPARSE_CELLS,
} from './budgets.ts'
import {
  JsonBudgetError,
  JsonSyntaxError,
  isJsonObject,
  parseJson,
  showJson,
  type JsonObject,
  type JsonValue,
} from './json.ts'
import {
  ADDRESS_NOT_RELOCATABLE,
  CELL_SIZE,
  type CellRun,
  CellScanner,
  SeenCells,
  SeenCellsBudgetError,
  addressOffset,
  addressSegment,
  cellValue,
  isPointer,
  pointerOffset,
  pointerSegment,
  rawAddress,
  toWords,
  valueBelow,
} from './memory.ts'
import { checkMetadata, type PieMetadata, type Segment } from './metadata.ts'
import {
  checkKnownKeys,
  coercedInteger,
  notIntegerReason,
  withReason,
  type PieRefusal,
  type RefusalReason,
} from './reasons.ts'
import { factTopologyFromAdditionalData } from './topology.ts'

/** How {@link validatePie} reads a PIE. */
export type ValidatePieOptions = {
  /**
   * Problem lines kept before "and N more".
   * @default 50
   */
  maxProblems?: number
  /** Stops the validation (an AbortedError). */
  signal?: AbortSignal
  /**
   * memory.bin's bytes as another reader reads them (the packer, for a directory validated
   * while it is packed), instead of reading the file again. Each chunk is scanned before the
   * next is asked for.
   */
  memoryChunks?: AsyncIterable<Uint8Array> | undefined
  /** Called once the JSON files are read and checked, before memory.bin, with the problems found so far. */
  beforeMemory?: ((problems: number) => void) | undefined
}

/** What validation found in a PIE: its files, version, steps, builtins, segments and sizes. */
export type PieSummary = {
  source: 'zip' | 'directory'
  path: string | undefined
  entries: PieEntrySummary[]
  /** From version.json; "1.0" when the file is absent. */
  version: string | undefined
  nSteps: number | undefined
  builtins: string[]
  segments: { name: string; index: number; size: number }[]
  /** Cells in memory.bin. */
  memoryCells: number
  outputSize: number | undefined
  programSize: number | undefined
}

/** Whether a PIE is valid, every problem found, and its summary. */
export type PieValidationResult = {
  valid: boolean
  /**
   * One line per broken rule, capped; the last line says how many more there were. Each line
   * ends with its reason class in brackets (reasons.ts).
   */
  problems: string[]
  /** The problems listed, each with its reason class (no "and N more" line). */
  refusals: PieRefusal[]
  summary: PieSummary
}

/** What a validation pass learned, for inspectPie. */
export type PieAnalysis = PieValidationResult & {
  metadata: PieMetadata | undefined
  /** The program output, complete only when the PIE is valid. */
  output: bigint[]
  outputBuiltin: JsonValue | undefined
  source: PieSource
}

const DEFAULT_MAX_PROBLEMS = 50
// Per rule, so one flood (a million bad cells) does not hide every other kind of problem.
const MAX_PER_RULE = 10

class Problems {
  private readonly lines: PieRefusal[] = []
  private readonly perRule = new Map<string, number>()
  private hidden = 0
  total = 0
  private readonly max: number
  constructor(max: number) {
    this.max = max
  }
  add(line: string, reason: RefusalReason, rule = line): void {
    this.total++
    const count = (this.perRule.get(rule) ?? 0) + 1
    this.perRule.set(rule, count)
    if (this.lines.length < this.max && count <= MAX_PER_RULE)
      this.lines.push({ problem: withReason(line, reason), reason })
    else this.hidden++
  }
  list(): string[] {
    const lines = this.lines.map((line) => line.problem)
    return this.hidden ? [...lines, `... and ${this.hidden} more problem${this.hidden === 1 ? '' : 's'}`] : lines
  }
  refusals(): PieRefusal[] {
    return [...this.lines]
  }
}

type JsonEntryName = Exclude<PieEntryName, 'memory.bin'>

async function readWhole(source: PieSource, name: JsonEntryName, problems: Problems): Promise<string | undefined> {
  const limit = JSON_ENTRY_BYTES[name]
  const declared = source.entries.find((entry) => entry.name === name)?.size
  let buffer: Buffer | undefined
  let total = 0
  const chunks = source.open(name)[Symbol.asyncIterator]()
  try {
    for (;;) {
      const step = await chunks.next()
      if (!buffer) {
        // The local header is read (Python's zipfile refuses a bad one before it reads data): the
        // declared size is held to the budget before more than a chunk is inflated; and counted
        // while inflating (the zip reader also holds the entry to its declared size). One buffer
        // of the declared size (no list of chunks and no concatenated copy beside it): the text's
        // bytes are held once, then once more as the string, never three times.
        if (declared !== undefined) checkJsonEntrySize(source.path, name, declared)
        buffer = Buffer.allocUnsafe(Math.min(declared ?? 64 * 1024, limit))
      }
      if (step.done) break
      const chunk = step.value
      if (total + chunk.length > limit) checkJsonEntrySize(source.path, name, total + chunk.length)
      if (total + chunk.length > buffer.length) {
        const grown = Buffer.allocUnsafe(Math.min(limit, Math.max(total + chunk.length, buffer.length * 2)))
        buffer.copy(grown, 0, 0, total)
        buffer = grown
      }
      buffer.set(chunk, total)
      total += chunk.length
    }
  } catch (error) {
    if (!(error instanceof ZipFormatError)) throw error
    problems.add(`${name}: ${error.message}`, error.reason)
    // Python refuses it: nothing more to read. Where it reads it (an ambiguity), what it read
    // (the bytes handed out so far) is checked on, so its own refusals are found too.
    if (error.reason === 'cairo-lang') return undefined
  } finally {
    await chunks.return?.(undefined)
  }
  buffer ??= Buffer.alloc(0)
  // CairoPie.from_file decodes every JSON file as ASCII (cairo-vm reads UTF-8).
  for (let i = 0; i < total; i++) {
    if (buffer[i]! >= 0x80) {
      problems.add(
        `${name}: byte ${i} is 0x${buffer[i]!.toString(16)}, not ASCII; cairo-lang reads a PIE's JSON files as ASCII (write non-ASCII text as \\u escapes)`,
        'cairo-lang',
      )
      break
    }
  }
  return buffer.toString('utf8', 0, total)
}

async function readJson(source: PieSource, name: JsonEntryName, problems: Problems): Promise<JsonValue | undefined> {
  if (!source.has(name)) return undefined
  const text = await readWhole(source, name, problems)
  if (text === undefined) return undefined
  let duplicate: [string, number] | undefined
  try {
    let nonFinite: [string, number] | undefined
    const value = parseJson(text, PIE_JSON_BUDGET, {
      onDuplicateKey: (key, at) => (duplicate ??= [key, at]),
      onNonFinite: (literal, at) => (nonFinite ??= [literal, at]),
    })
    if (nonFinite) {
      // serde_json refuses it wherever it stands, even where it skips a value; Python's json reads a float.
      problems.add(
        `${name}: ${nonFinite[0]} at character ${nonFinite[1]} is not JSON; Python's json reads it as a float, cairo-vm's serde_json refuses it`,
        'cairo-vm',
      )
    }
    if (duplicate) {
      // Python's json keeps the last value; cairo-vm's serde refuses a struct's field given twice.
      problems.add(
        `${name}: key ${JSON.stringify(duplicate[0])} appears twice in one object (at character ${duplicate[1]}); cairo-lang keeps the last value, cairo-vm refuses it`,
        'ambiguous',
      )
    }
    return value
  } catch (error) {
    if (error instanceof JsonBudgetError)
      throw budgetError(source.path, `${name} holds ${error.message}, past its budget`)
    if (error instanceof JsonSyntaxError) {
      problems.add(`${name}: not valid JSON: ${error.message}`, 'cairo-lang')
      return undefined
    }
    throw error
  }
}

/** The one version.json cairo-vm reads (its CAIRO_PIE_VERSION). */
const CAIRO_VM_PIE_VERSION = '1.1'

/** ExecutionResourcesStone's fields (cairo-lang's schema); cairo-vm's serde ignores others. */
const EXECUTION_RESOURCES_KEYS = ['n_steps', 'builtin_instance_counter', 'n_memory_holes']

function checkExecutionResources(
  value: JsonValue | undefined,
  builtins: string[] | undefined,
  problems: Problems,
): number | undefined {
  if (value === undefined) return undefined
  const file = EXECUTION_RESOURCES
  if (!isJsonObject(value)) {
    problems.add(`${file}: top level is ${showJson(value)}; expected an object`, 'cairo-lang')
    return undefined
  }
  checkKnownKeys(value, EXECUTION_RESOURCES_KEYS, `${file}: the top level`, (line) => problems.add(line, 'cairo-lang'))
  let nSteps: number | undefined
  const rawSteps = value.get('n_steps')
  const steps = coercedInteger(rawSteps)
  if (typeof rawSteps !== 'bigint')
    problems.add(`${file}: n_steps is ${showJson(rawSteps)}; expected an integer`, notIntegerReason(rawSteps))
  if (steps === undefined) {
    // reported above
  } else if (steps < 1n || steps >= BigInt(TWO_POW_30))
    problems.add(`${file}: n_steps = ${steps}; must satisfy 1 <= n_steps < 2^30`, 'cairo-lang')
  else nSteps = Number(steps)
  const inRange = (raw: JsonValue | undefined) => {
    const n = coercedInteger(raw)
    return n !== undefined && n >= 0n && n < BigInt(TWO_POW_30)
  }
  if (value.has('n_memory_holes')) {
    const holes = value.get('n_memory_holes')
    if (typeof holes !== 'bigint' || !inRange(holes)) {
      problems.add(
        `${file}: n_memory_holes = ${showJson(holes)}; must be an integer in [0, 2^30)`,
        inRange(holes) ? 'cairo-vm' : 'cairo-lang',
      )
    }
  }
  const counter = value.get('builtin_instance_counter')
  if (!isJsonObject(counter)) {
    problems.add(`${file}: builtin_instance_counter is ${showJson(counter)}; expected an object`, 'cairo-lang')
    return nSteps
  }
  for (const [key, count] of counter) {
    if (typeof count !== 'bigint' || !inRange(count)) {
      problems.add(
        `${file}: builtin_instance_counter.${key} = ${showJson(count)}; must be an integer in [0, 2^30)`,
        inRange(count) ? 'cairo-vm' : 'cairo-lang',
      )
    }
  }
  if (builtins) {
    const expected = builtins.map((name) => `${name}_builtin`)
    const actual = [...counter.keys()]
    const missing = expected.filter((key) => !actual.includes(key))
    const extra = actual.filter((key) => !expected.includes(key))
    if (missing.length || extra.length) {
      const parts = [
        missing.length ? `missing ${missing.map((k) => `"${k}"`).join(', ')}` : '',
        extra.length ? `unexpected ${extra.map((k) => `"${k}"`).join(', ')}` : '',
      ].filter(Boolean)
      const wanted = expected.length ? expected.map((k) => `"${k}"`).join(', ') : 'none'
      problems.add(
        `${file}: builtin_instance_counter keys must be exactly ${wanted} (one per program builtin): ${parts.join('; ')}`,
        'cairo-lang',
      )
    }
  }
  return nSteps
}

/** additional_data.json's keys as cairo-vm reads them (BuiltinName::from_str_with_suffix). */
const ADDITIONAL_DATA_KEYS = [...BUILTIN_ORDER, 'segment_arena'].map((name) => `${name}_builtin`)
/** The shapes cairo-vm's BuiltinAdditionalData reads, as a refusal lists them. */
const ADDITIONAL_DATA_SHAPES =
  'an empty list, [[segment, offset], ...] pairs, {"pages", "attributes"} output data, [[[segment, offset], [r, s]], ...] signatures, or null'

function checkAdditionalData(value: JsonValue | undefined, problems: Problems): JsonObject | undefined {
  if (value === undefined) return undefined
  if (!isJsonObject(value)) {
    problems.add(`${ADDITIONAL_DATA}: top level is ${showJson(value)}; expected an object`, 'cairo-lang')
    return undefined
  }
  for (const key of value.keys()) {
    if (key.length >= 1000)
      problems.add(`${ADDITIONAL_DATA}: key of ${key.length} characters; cairo-lang allows under 1000`, 'cairo-lang')
    else if (!ADDITIONAL_DATA_KEYS.includes(key)) {
      problems.add(
        `${ADDITIONAL_DATA}: key ${showJson(key)} is not a builtin's ("output_builtin", "pedersen_builtin", ...); cairo-vm reads only those`,
        'cairo-vm',
      )
    } else if (!isBuiltinAdditionalData(value.get(key)!)) {
      problems.add(
        `${ADDITIONAL_DATA}: ${key} is ${showJson(value.get(key))}, a shape cairo-vm's BuiltinAdditionalData has no variant for (${ADDITIONAL_DATA_SHAPES})`,
        'cairo-vm',
      )
    }
  }
  return value
}

const U64 = 2n ** 64n
const isUsize = (value: JsonValue | undefined) => typeof value === 'bigint' && value >= 0n && value < U64
const isInteger = (value: JsonValue | undefined) => typeof value === 'bigint'
const isPair = (value: JsonValue | undefined, item: (v: JsonValue | undefined) => boolean) =>
  Array.isArray(value) && value.length === 2 && item(value[0]) && item(value[1])

/**
 * Whether cairo-vm's serde reads `value` as a BuiltinAdditionalData (vm/src/vm/runners/cairo_pie.rs,
 * an untagged enum tried in order): Empty (`[]`), Hash (a list of [usize, usize]), Output
 * ({"pages": {usize: [usize, usize]}, "attributes": {string: [usize...]}}, other keys ignored),
 * Signature (a list of [[u64, u64], [r, s]], r and s decimal integers), None (`null`). cairo-lang
 * reads any JSON there.
 */
function isBuiltinAdditionalData(value: JsonValue): boolean {
  if (value === null) return true
  if (Array.isArray(value)) {
    return (
      value.every((item) => isPair(item, isUsize)) ||
      value.every((item) => isPair(item, (v) => isPair(v, isInteger)) && isPair((item as JsonValue[])[0], isUsize))
    )
  }
  if (!isJsonObject(value)) return false
  const pages = value.get('pages')
  const attributes = value.get('attributes')
  return (
    isJsonObject(pages) &&
    isJsonObject(attributes) &&
    [...pages].every(([id, page]) => /^\+?\d+$/.test(id) && BigInt(id) < U64 && isPair(page, isUsize)) &&
    [...attributes.values()].every((list) => Array.isArray(list) && list.every(isUsize))
  )
}

/**
 * version.json: cairo-lang loads any JSON there and never checks it; cairo-vm requires
 * `cairo_pie` to be "1.1" and ignores other keys. So that is what passes; absent means 1.0.
 */
function checkVersion(value: JsonValue | undefined, present: boolean, problems: Problems): string | undefined {
  if (!present) return '1.0'
  if (value === undefined) return undefined
  const version = isJsonObject(value) ? value.get('cairo_pie') : undefined
  if (version !== CAIRO_VM_PIE_VERSION) {
    const found = isJsonObject(value) ? `cairo_pie = ${showJson(version)}` : showJson(value)
    problems.add(
      `${VERSION}: must hold "cairo_pie": "${CAIRO_VM_PIE_VERSION}" (or be left out); found ${found}`,
      'cairo-vm',
    )
    return undefined
  }
  return version
}

function describeSegments(sizes: Map<number, number>): string {
  const indices = [...sizes.keys()].sort((a, b) => a - b)
  if (!indices.length) return 'none declared'
  const contiguous = indices.every((index, k) => index === indices[0]! + k)
  return contiguous ? `segments ${indices[0]}-${indices[indices.length - 1]}` : `segments ${indices.join(', ')}`
}

type MemoryFindings = { cells: number; output: Map<number, bigint> }

/**
 * An address written twice with the same value is one PIE to both readers (cairo-lang's
 * MemoryDict keeps the last, cairo-vm inserts both into its VM, which accepts an equal value);
 * with different values it is not (cairo-vm's VM fails on the second). The scan keeps one bit per
 * cell, not the values, so the rewritten addresses (rare: no writer emits them) are compared in a
 * second pass over memory.bin.
 */
async function compareRewrites(
  source: PieSource,
  rewritten: Map<number, number>,
  problems: Problems,
  signal: AbortSignal | undefined,
): Promise<void> {
  const first = new Map<number, bigint>()
  const differing = new Map<number, number>()
  const scanner = new CellScanner((view, at, byte) => {
    const segment = addressSegment(view, at)
    if (segment === ADDRESS_NOT_RELOCATABLE) return
    const offset = addressOffset(view, at)
    const key = segment * 2 ** 30 + offset
    if (offset >= 2 ** 30 || !rewritten.has(key) || differing.has(key)) return
    const value = cellValue(view, at)
    const earlier = first.get(key)
    if (earlier === undefined) first.set(key, value)
    else if (earlier !== value) differing.set(key, byte)
  })
  try {
    for await (const chunk of source.open(MEMORY)) {
      if (signal?.aborted) throw new AbortedError('Validating the PIE was aborted', { cause: signal.reason })
      scanner.push(chunk)
    }
  } catch (error) {
    // Reported by the first pass.
    if (!(error instanceof ZipFormatError)) throw error
  }
  for (const [key, byte] of differing) {
    const where = `(${Math.floor(key / 2 ** 30)}, ${key % 2 ** 30})`
    problems.add(
      `${MEMORY}: cell at byte ${byte} writes address ${where} again with another value; an earlier cell already wrote it (cairo-lang keeps the last value, cairo-vm's VM refuses the second)`,
      'ambiguous',
      'duplicate-address',
    )
  }
}

async function scanMemory(
  source: PieSource,
  metadata: PieMetadata | undefined,
  outputSegment: Segment | undefined,
  problems: Problems,
  signal: AbortSignal | undefined,
  chunks: AsyncIterable<Uint8Array>,
): Promise<MemoryFindings> {
  const file = MEMORY
  const sizes = metadata?.segmentSizes ?? new Map<number, number>()
  const segmentRange = describeSegments(sizes)
  // Address segments have 16 bits: a flat table; pointer segments can be larger: the Map (the
  // fast path below looks pointer targets below 2^16 up in this table too).
  const addressSizes = new Float64Array(1 << 16).fill(-1)
  for (const [index, size] of sizes) if (index < addressSizes.length) addressSizes[index] = size
  const prime = metadata && metadata.program.prime > 0n ? toWords(metadata.program.prime) : undefined
  const data = metadata?.program.data
  const outIndex = outputSegment?.index ?? -1
  const output = new Map<number, bigint>()
  const seen = new SeenCells({
    baseBytes: SEEN_CELLS_BASE_BYTES,
    bytesPerCell: SEEN_CELLS_BYTES_PER_CELL,
    sparseCells: SPARSE_CELLS,
  })
  let programWritten = 0
  let outputWritten = 0
  // Addresses written more than once (key segment * 2^30 + offset), with the first rewrite's byte.
  const rewritten = new Map<number, number>()
  const checkSegments = metadata !== undefined

  const checkCell = (view: DataView, at: number, byte: number) => {
    const segment = addressSegment(view, at)
    let offset = -1
    if (segment === ADDRESS_NOT_RELOCATABLE) {
      const address = `0x${rawAddress(view, at).toString(16)}`
      problems.add(
        `${file}: cell at byte ${byte} has address ${address}, which is not a relocatable address (bit 63 clear)`,
        'cairo-lang',
        'address-not-relocatable',
      )
    } else if (checkSegments) {
      const size = addressSizes[segment]!
      const candidate = addressOffset(view, at)
      if (size < 0) {
        problems.add(
          `${file}: cell at byte ${byte} has address in segment ${segment}, which does not exist (${segmentRange})`,
          'cairo-lang',
          'address-segment',
        )
      } else if (candidate >= size) {
        problems.add(
          `${file}: cell at byte ${byte} has address (${segment}, ${candidate}), past the end of segment ${segment} (size ${size})`,
          'cairo-lang',
          'address-offset',
        )
      } else {
        offset = candidate
        if (seen.mark(segment, offset)) {
          // Written again: compared with the earlier value once the scan is done (compareRewrites).
          const key = segment * 2 ** 30 + offset
          if (!rewritten.has(key)) {
            if (rewritten.size >= REWRITTEN_CELLS)
              throw budgetError(
                source.path,
                `memory.bin writes more than ${REWRITTEN_CELLS} addresses twice, past the budget`,
              )
            rewritten.set(key, byte)
          }
        } else if (segment === 0) programWritten++
        else if (segment === outIndex) outputWritten++
      }
    }
    const pointer = isPointer(view, at)
    if (pointer) {
      // Only the segment is checked: a segment's recorded size counts the cells written in it,
      // and a pointer may point past them (cairo-lang's is_valid_memory_value lets its offset
      // be anything below 2^64; cairo-vm checks no value). docs/pie-validation.md.
      if (checkSegments) {
        const target = pointerSegment(view, at)
        if (!sizes.has(target)) {
          problems.add(
            `${file}: cell at byte ${byte} holds a pointer into segment ${target}, which does not exist (${segmentRange})`,
            'cairo-lang',
            'pointer-segment',
          )
        }
      }
    } else if (prime && !valueBelow(view, at, prime)) {
      problems.add(
        `${file}: cell at byte ${byte} holds 0x${cellValue(view, at).toString(16)}, which is not below the prime (cairo-lang keeps the integer, cairo-vm reduces it modulo the prime)`,
        'ambiguous',
        'value-range',
      )
    }
    if (offset < 0) return
    // A negative word stands for one metadata.json did not hold as an integer (reported there).
    if (segment === 0 && data && data[offset]! >= 0n) {
      const expected = data[offset]!
      const actual = cellValue(view, at)
      if (pointer) {
        problems.add(
          `${file}: program segment cell (0, ${offset}) at byte ${byte} holds a pointer; metadata.json program.data[${offset}] = ${expected}`,
          'unprovable',
          'program-mismatch',
        )
      } else if (actual !== expected) {
        problems.add(
          `${file}: program segment cell (0, ${offset}) at byte ${byte} is ${actual}, but metadata.json program.data[${offset}] = ${expected}`,
          'unprovable',
          'program-mismatch',
        )
      }
    }
    if (segment === outIndex) {
      if (pointer) {
        const shown = `(${pointerSegment(view, at)}, ${pointerOffset(view, at)})`
        problems.add(
          `${file}: output cell (${segment}, ${offset}) at byte ${byte} holds a pointer ${shown}; program output must be field elements`,
          'unprovable',
          'output-pointer',
        )
      } else {
        if (output.size >= OUTPUT_CELLS)
          throw budgetError(source.path, `memory.bin writes more than ${OUTPUT_CELLS} output cells, past the budget`)
        output.set(offset, cellValue(view, at))
      }
    }
  }

  // The fast path: a run of cells checked on their 32-bit words, for the common cell (an
  // address in a known segment other than the program's and the output's, holding a field
  // element below the prime or a pointer into a known segment) not seen before. Any other cell
  // goes to the full check above, which reports it exactly; a cell seen before does too, after
  // being marked here (marking it again there finds it seen, and says so).
  const primeTop = prime ? prime[7]! : 0xffffffff
  const onRun: CellRun = (words, count, view, at, byte) => {
    for (let k = 0, w = 0; k < count; k++, w += 10) {
      const hi = words[w + 1]!
      const segment = (hi >>> 15) & 0xffff
      const offset = words[w]!
      const size = addressSizes[segment]!
      let fast =
        checkSegments &&
        hi >>> 31 === 1 &&
        (hi & 0x7fff) === 0 &&
        segment !== 0 &&
        segment !== outIndex &&
        offset < size
      if (fast) {
        const top = words[w + 9]!
        if (top >>> 31 === 0) {
          fast = top < primeTop
        } else {
          // The pointer's segment as cairo-lang and cairo-vm decode it (memory.ts, pointerSegment).
          fast = addressSizes[(words[w + 3]! >>> 15) & 0xffff]! >= 0
        }
      }
      if (!fast) {
        checkCell(view, at + 40 * k, byte + 40 * k)
        continue
      }
      let marked = seen.markOnPage(segment, offset)
      if (marked < 0) marked = seen.mark(segment, offset) ? 1 : 0
      if (marked === 1) checkCell(view, at + 40 * k, byte + 40 * k)
    }
  }
  const scanner = new CellScanner(checkCell, onRun)

  try {
    for await (const chunk of chunks) {
      if (signal?.aborted) throw new AbortedError('Validating the PIE was aborted', { cause: signal.reason })
      scanner.push(chunk)
    }
  } catch (error) {
    if (error instanceof SeenCellsBudgetError)
      throw budgetError(source.path, `memory.bin holds ${error.message}, past the duplicate check's budget`)
    if (!(error instanceof ZipFormatError)) throw error
    problems.add(`${file}: ${error.message}`, error.reason)
  }
  if (scanner.leftover) {
    problems.add(
      `${file}: size ${scanner.bytes} bytes is not a multiple of ${CELL_SIZE}; the last cell (byte ${scanner.bytes - scanner.leftover}) is truncated`,
      'cairo-lang',
    )
  }
  if (rewritten.size) await compareRewrites(source, rewritten, problems, signal)

  const missingCells = (segment: number, size: number, written: number) => {
    const first: number[] = []
    for (let i = 0; i < size && first.length < 5; i++) if (!seen.has(segment, i)) first.push(i)
    const missing = size - written
    return `${missing} cell${missing === 1 ? '' : 's'} missing (offsets ${first.join(', ')}${missing > first.length ? ', ...' : ''})`
  }
  const programSize = data && metadata?.programSegment ? Math.min(data.length, metadata.programSegment.size) : 0
  if (programWritten < programSize) {
    problems.add(
      `${file}: the program segment is not fully written: ${missingCells(0, programSize, programWritten)}; segment 0 must equal program.data (the bootloader loads program.data there)`,
      'unprovable',
    )
  }
  if (outputSegment && outputWritten < outputSegment.size) {
    const missing = missingCells(outputSegment.index, outputSegment.size, outputWritten)
    problems.add(
      `${file}: output segment ${outputSegment.index} (size ${outputSegment.size}) is not fully written: ${missing}; the SHARP fact is computed over every output cell`,
      'unprovable',
    )
  }
  return { cells: scanner.cells, output }
}

export async function analysePie(input: PieInput, options: ValidatePieOptions = {}): Promise<PieAnalysis> {
  const problems = new Problems(options.maxProblems ?? DEFAULT_MAX_PROBLEMS)
  const source = await openPie(input)
  try {
    for (const { line, reason } of source.problems) problems.add(line, reason)

    const metadataJson = await readJson(source, METADATA, problems)
    const metadata =
      metadataJson === undefined
        ? undefined
        : checkMetadata(metadataJson, (line, reason = 'cairo-lang') =>
            problems.add(line, reason, line.replace(/\d+/g, '#')),
          )
    const builtins = metadata?.program.builtins
    const nSteps = checkExecutionResources(await readJson(source, EXECUTION_RESOURCES, problems), builtins, problems)
    const additionalData = checkAdditionalData(await readJson(source, ADDITIONAL_DATA, problems), problems)
    const version = checkVersion(await readJson(source, VERSION, problems), source.has(VERSION), problems)

    const outputSegment = metadata?.builtinSegments.find(([name]) => name === 'output')?.[1]
    const outputBuiltin = additionalData?.get('output_builtin')
    if (
      outputSegment &&
      additionalData &&
      !(isJsonObject(outputBuiltin) && outputBuiltin.has('pages') && outputBuiltin.has('attributes'))
    ) {
      // cairo-lang's get_cairo_pie_fact_info reads additional_data["output_builtin"]["pages"] and
      // ["attributes"] (a KeyError or a TypeError without them).
      const found = isJsonObject(outputBuiltin)
        ? `an object without ${['pages', 'attributes']
            .filter((key) => !outputBuiltin.has(key))
            .map((key) => `"${key}"`)
            .join(' and ')}`
        : showJson(outputBuiltin)
      problems.add(
        `${ADDITIONAL_DATA}: output_builtin must be {"pages": {...}, "attributes": {...}} when the program uses the output builtin (found ${found}); the SHARP fact is computed from it`,
        'unprovable',
      )
    } else if (outputSegment && additionalData) {
      try {
        const topology = factTopologyFromAdditionalData(outputSegment.size, outputBuiltin)
        // The tree's shape is checked here; its hashes are the fact's (../facts/).
        if (outputSegment.size <= 1_000_000)
          walkFactTree(
            outputSegment.size,
            topology,
            () => 0,
            () => 0,
          )
      } catch (error) {
        if (!(error instanceof FactTopologyError)) throw error
        problems.add(
          `${ADDITIONAL_DATA}: output_builtin: ${error.message}; the SHARP fact cannot be computed`,
          'unprovable',
        )
      }
    }

    let findings: MemoryFindings = { cells: 0, output: new Map() }
    options.beforeMemory?.(problems.total)
    if (source.has(MEMORY))
      findings = await scanMemory(
        source,
        metadata,
        outputSegment,
        problems,
        options.signal,
        options.memoryChunks ?? source.open(MEMORY),
      )

    const segments: PieSummary['segments'] = []
    if (metadata) {
      const add = (name: string, segment: Segment | undefined) => segment && segments.push({ name, ...segment })
      add('program', metadata.programSegment)
      add('execution', metadata.executionSegment)
      for (const [name, segment] of metadata.builtinSegments) add(name, segment)
      add('ret_fp', metadata.retFpSegment)
      add('ret_pc', metadata.retPcSegment)
      for (const [k, segment] of metadata.extraSegments.entries()) add(`extra_${k}`, segment)
    }
    const output: bigint[] = []
    if (outputSegment)
      for (let i = 0; i < outputSegment.size && findings.output.has(i); i++) output.push(findings.output.get(i)!)

    const list = problems.list()
    return {
      valid: problems.total === 0,
      problems: list,
      refusals: problems.refusals(),
      summary: {
        source: source.kind,
        path: source.path,
        entries: source.entries,
        version,
        nSteps,
        builtins: builtins ?? [],
        segments,
        memoryCells: findings.cells,
        outputSize: outputSegment?.size,
        programSize: metadata?.program.data.length,
      },
      metadata,
      output,
      outputBuiltin,
      source,
    }
  } catch (error) {
    // What was found before reading stopped (the container's problems, cairo-lang's own among them) goes with it.
    if (error instanceof PieBudgetError) error.earlier = problems.refusals()
    throw error
  } finally {
    await source.close()
  }
}

/**
 * Checks a PIE against every validity rule of the Cairo PIE format (cairo-lang's checks, plus a
 * few cheap ones), in one streaming pass with flat memory. Never throws for an invalid PIE:
 * `valid` is false and `problems` says why.
 *
 * @param input A pie.zip path, a PIE directory, or a zip's bytes.
 * @param options How many problems to keep, and a signal.
 * @returns `{ valid, problems, refusals, summary }`.
 * @throws {InvalidInputError} When the path cannot be read at all.
 * @example
 * ```ts
 * import { validatePie } from 'proving-kit'
 *
 * const { valid, problems } = await validatePie('build/pie.zip')
 * if (!valid) throw new Error(problems.join('\n'))
 * ```
 */
export async function validatePie(input: PieInput, options: ValidatePieOptions = {}): Promise<PieValidationResult> {
  try {
    const { valid, problems, refusals, summary } = await analysePie(input, options)
    return { valid, problems, refusals, summary }
  } catch (error) {
    // Past a parsing budget: invalid, with what was found before and the line that says which budget (reading stopped there).
    if (!(error instanceof PieBudgetError)) throw error
    const refusals: PieRefusal[] = [...error.earlier, { problem: error.shortMessage, reason: 'budget' }]
    return { valid: false, problems: refusals.map((r) => r.problem), refusals, summary: emptySummary(input) }
  }
}

function emptySummary(input: PieInput): PieSummary {
  return {
    source: typeof input === 'string' && !input.endsWith('.zip') ? 'directory' : 'zip',
    path: typeof input === 'string' ? input : undefined,
    entries: [],
    version: undefined,
    nSteps: undefined,
    builtins: [],
    segments: [],
    memoryCells: 0,
    outputSize: undefined,
    programSize: undefined,
  }
}

/**
 * The error {@link assertValidPie} throws for an invalid PIE.
 *
 * @param problems The problem lines.
 * @param path The PIE's path, when it has one.
 * @returns An InvalidPieError listing them.
 * @example
 * ```ts
 * import { invalidPieError, validatePie } from 'proving-kit/pie'
 *
 * const result = await validatePie('build/pie.zip')
 * if (!result.valid) throw invalidPieError(result.problems, 'build/pie.zip')
 * ```
 */
export function invalidPieError(problems: readonly string[], path: string | undefined): InvalidPieError {
  const where = path ?? 'the PIE'
  return new InvalidPieError(
    `${where} is not a valid Cairo PIE (${problems.length === 1 ? '1 problem' : `${problems.length} problems`})`,
    {
      problems,
      input: path,
    },
  )
}

/**
 * Like {@link validatePie}, but throws when the PIE is invalid.
 *
 * @param input A pie.zip path, a PIE directory, or a zip's bytes.
 * @param options How many problems to keep, and a signal.
 * @returns The PIE's summary.
 * @throws {InvalidPieError} When the PIE is invalid (every problem in `problems`).
 * @throws {InvalidInputError} When the path cannot be read at all.
 * @example
 * ```ts
 * import { assertValidPie } from 'proving-kit'
 *
 * const { nSteps, builtins } = await assertValidPie('build/pie.zip')
 * ```
 */
export async function assertValidPie(input: PieInput, options: ValidatePieOptions = {}): Promise<PieSummary> {
  const result = await validatePie(input, options)
  if (!result.valid) throw invalidPieError(result.problems, typeof input === 'string' ? input : undefined)
  return result.summary
}
