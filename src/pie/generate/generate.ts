/**
 * A synthetic, valid PIE of any size, for benchmarks and tests: a real program (the public
 * fibonacci_compiled.json from starkware-libs/proving-utils, Apache-2.0, whose Pedersen program
 * hash is a published vector) with the output builtin, and a large execution segment filled
 * with trace-like cells: counters and other small integers, frame and program pointers, field
 * elements just below the prime (Cairo's negative numbers) and some full-width felts (hash
 * results). The mix is tuned so DEFLATE level 1 keeps ~23% of memory.bin, like real traces.
 * The trace is not an execution of the program: it only has to satisfy cairo-lang's validity
 * rules. Output is deterministic for a seed, and memory.bin is streamed to disk in 4 MiB
 * chunks, so any size is generated in flat memory.
 */
import { type FileHandle, mkdir, open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AbortedError, InvalidInputError } from '../../core/errors.ts'
import {
  ADDITIONAL_DATA,
  EXECUTION_RESOURCES,
  MEMORY,
  METADATA,
  STARK_PRIME,
  TWO_POW_30,
  VERSION,
} from '../shared/index.ts'
import { CELL_SIZE, toWords, writeCell } from '../validate/index.ts'

/** fibonacci_compiled.json (cairo-lang 0.14.0): its words, main = pc of __main__.main, builtins. */
export const FIBONACCI_PROGRAM = {
  data: [
    290341444919459839n,
    1n,
    1226245742482522112n,
    4n,
    74168662805676031n,
    0n,
    5189976364521848832n,
    1n,
    5193354059947409408n,
    5188850460319907840n,
    1226245742482522112n,
    6n,
    4612389712311451647n,
    5198983563776458752n,
    2n,
    2345108766317314046n,
    146226256843603965n,
    4n,
    5191102242953854976n,
    2345108766317314046n,
    5191102242953854976n,
    5200109442208333824n,
    5198983563776458752n,
    STARK_PRIME - 1n,
    1226245742482522112n,
    STARK_PRIME - 8n,
    2345108766317314046n,
  ],
  main: 6,
  builtins: ['output'],
} as const

/** The PIE {@link generatePie} writes. */
export type GeneratePieOptions = {
  /** The directory to write the PIE's files into (made when missing). */
  outDir: string
  /** Target size of memory.bin in bytes (rounded down to whole cells; at least ~2 KiB). */
  memoryBytes: number
  /**
   * Words of program (default: fibonacci's 27). Above that, fibonacci's words are followed by
   * instruction-like filler (63-bit encodings, small immediates, negative constants), so the
   * program hash has a real size to chew on. memory.bin holds them too.
   */
  programWords?: number
  /**
   * Seeds the filler, so the same options give the same PIE.
   * @default 1
   */
  seed?: number
  /**
   * `cairo0` (default): fibonacci's program with the output builtin alone. `cairo1`: shaped like
   * what cairo1-run writes for a Cairo 1 program (generateCairo1Pie).
   */
  shape?: PieShape
  /** Stops the generation (an AbortedError). */
  signal?: AbortSignal
}

/** The kind of program a generated PIE runs: a Cairo 0 program, or one shaped like a Cairo 1 run. */
export type PieShape = 'cairo0' | 'cairo1'
/** Every {@link PieShape}. */
export const PIE_SHAPES: readonly PieShape[] = ['cairo0', 'cairo1']

/** The PIE {@link generatePie} wrote: its directory, sizes, steps and output. */
export type GeneratedPie = {
  dir: string
  memoryBytes: number
  cells: number
  executionSize: number
  nSteps: number
  output: bigint[]
  programWords: number
}

const FIBONACCI_SIZE = FIBONACCI_PROGRAM.data.length
const OUTPUT_SIZE = 2
const MIN_EXECUTION = 16
const CHUNK_CELLS = 104_857 // just under 4 MiB of cells
// Frame layout: 8 cells per synthetic step; see fillExecution.
const FRAME = 8
// Probability (out of 2^32) that a "value" cell holds a full-width felt: tunes the zip ratio.
const FELT_THRESHOLD = Math.floor(0.4 * 2 ** 32)

/**
 * Reads a size: "1GiB", "512MiB", "64KiB", "1G", "1000" (bytes; the multiples are binary).
 *
 * @param text The size.
 * @returns Bytes.
 * @throws {InvalidInputError} When it is not a size.
 * @example
 * ```ts
 * import { parseByteSize } from 'proving-kit/pie'
 *
 * parseByteSize('512MiB') // 536870912
 * ```
 */
export function parseByteSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?\s*$/i.exec(text)
  if (!match) throw new InvalidInputError(`"${text}" is not a size (try 1GiB, 512MiB, 10MiB)`)
  const unit = (match[2] ?? 'b').toLowerCase()[0]!
  const scale = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[unit]!
  return Math.floor(Number(match[1]) * scale)
}

// mulberry32: tiny, fast, deterministic; quality is ample for filler data.
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
}

function fibonacci(n: number): bigint {
  let [a, b] = [1n, 1n]
  for (let i = 2; i < n; i++) [a, b] = [b, (a + b) % STARK_PRIME]
  return b
}

/** The program's words: fibonacci's, then deterministic instruction-like filler up to `count`. */
export function syntheticProgram(count: number, seed = 1): bigint[] {
  return instructionLike(FIBONACCI_PROGRAM.data.slice(0, Math.max(count, FIBONACCI_SIZE)), count, seed)
}

/** `data` followed by instruction-like words (63-bit encodings, small immediates, negative constants) up to `count`. */
function instructionLike(data: bigint[], count: number, seed: number): bigint[] {
  const random = prng(seed ^ 0x5eed)
  while (data.length < count) {
    const kind = random() & 7
    if (kind < 5) data.push((BigInt(0x40000000 | (random() & 0x3fffffff)) << 32n) | BigInt(random()))
    else if (kind < 7) data.push(BigInt(random() & 0xffff))
    else data.push(STARK_PRIME - BigInt(1 + (random() & 0xff)))
  }
  return data
}

/**
 * Writes a valid PIE directory of the size asked for (metadata, memory, additional data,
 * resources, version), for benchmarks and tests of large inputs.
 *
 * @param options Where, how large, how long a program, which shape.
 * @returns What was written: the directory, memory size, steps and output.
 * @throws {InvalidInputError} When a size is out of range.
 * @example
 * ```ts
 * import { generatePie, packPie, parseByteSize } from 'proving-kit/pie'
 *
 * const pie = await generatePie({ outDir: 'tmp/big-pie', memoryBytes: parseByteSize('1GiB') })
 * await packPie(pie.dir, 'tmp/big-pie.zip')
 * ```
 */
export async function generatePie(options: GeneratePieOptions): Promise<GeneratedPie> {
  if (options.shape === 'cairo1') return generateCairo1Pie(options)
  const seed = options.seed ?? 1
  const programSize = options.programWords ?? FIBONACCI_SIZE
  if (!Number.isInteger(programSize) || programSize < FIBONACCI_SIZE || programSize >= TWO_POW_30) {
    throw new InvalidInputError(
      `programWords must be an integer from ${FIBONACCI_SIZE} to 2^30 - 1, got ${programSize}`,
    )
  }
  const program = syntheticProgram(programSize, seed)
  const totalCells = Math.floor(options.memoryBytes / CELL_SIZE)
  const executionSize = totalCells - programSize - OUTPUT_SIZE
  if (executionSize < MIN_EXECUTION) {
    throw new InvalidInputError(
      `memory.bin of ${options.memoryBytes} bytes is too small; at least ${(programSize + OUTPUT_SIZE + MIN_EXECUTION) * CELL_SIZE} bytes`,
    )
  }
  if (executionSize >= TWO_POW_30)
    throw new InvalidInputError('memory.bin too large: the execution segment must stay below 2^30 cells')
  // One Cairo step per execution cell: the right order of magnitude for real traces.
  const nSteps = executionSize
  const claimIndex = 10 + (seed % 90)
  const output = [BigInt(claimIndex), fibonacci(claimIndex)]
  const dir = options.outDir
  await mkdir(dir, { recursive: true })

  // Written by hand: program words above 2^53 must appear as exact integers.
  const metadata =
    `{"program": {"prime": ${STARK_PRIME}, "data": [${program.join(', ')}], ` +
    `"builtins": ["output"], "main": ${FIBONACCI_PROGRAM.main}}, ` +
    `"program_segment": {"index": 0, "size": ${programSize}}, ` +
    `"execution_segment": {"index": 1, "size": ${executionSize}}, ` +
    `"ret_fp_segment": {"index": 3, "size": 0}, "ret_pc_segment": {"index": 4, "size": 0}, ` +
    `"builtin_segments": {"output": {"index": 2, "size": ${OUTPUT_SIZE}}}, "extra_segments": []}`
  await writeFile(join(dir, METADATA), metadata)
  await writeFile(
    join(dir, EXECUTION_RESOURCES),
    `{"n_steps": ${nSteps}, "builtin_instance_counter": {"output_builtin": ${OUTPUT_SIZE}}, "n_memory_holes": 0}`,
  )
  await writeFile(join(dir, ADDITIONAL_DATA), '{"output_builtin": {"pages": {}, "attributes": {}}}')
  await writeFile(join(dir, VERSION), '{"cairo_pie": "1.1"}')

  const memory = await MemoryWriter.open(join(dir, MEMORY), options.signal)
  try {
    await memory.cells(0, program.length, (offset) => program[offset]!)
    await memory.run(
      executionSize,
      executionFiller(executionSize, seed, {
        entry: [
          { segment: 2, offset: 0 },
          { segment: 3, offset: 0 },
          { segment: 4, offset: 0 },
        ],
        exit: [{ segment: 2, offset: OUTPUT_SIZE }],
      }),
    )
    await memory.cells(2, output.length, (k) => output[k]!)
    await memory.flush()
  } finally {
    await memory.close()
  }
  return {
    dir,
    memoryBytes: totalCells * CELL_SIZE,
    cells: totalCells,
    executionSize,
    nSteps,
    output,
    programWords: programSize,
  }
}

/**
 * The builtins cairo1-run gives a Cairo 1 program whose main takes Pedersen, RangeCheck, Bitwise
 * and Poseidon: those it uses, output first (added to hold the return values), in cairo-lang's
 * canonical order, so no ecdsa or keccak (cairo1-run's get_function_builtins).
 */
export const CAIRO1_BUILTINS = ['output', 'pedersen', 'range_check', 'bitwise', 'poseidon'] as const
/** Cells per instance of each builtin: the counter in execution_resources.json counts instances. */
const CELLS_PER_INSTANCE: Record<(typeof CAIRO1_BUILTINS)[number], number> = {
  output: 1,
  pedersen: 3,
  range_check: 1,
  bitwise: 5,
  poseidon: 6,
}
/** Extra segments: the arrays and dictionaries a Cairo 1 run allocates with hints (AllocSegment, the segment arena). */
const CAIRO1_ARRAYS = 6
const CAIRO1_MIN_PROGRAM = 16
const CAIRO1_DEFAULT_PROGRAM = 400

/**
 * A valid PIE shaped like one cairo1-run writes for a Cairo 1 program returning an
 * Array<felt252>: main = 0 (the entry code is at pc 0), the builtins of CAIRO1_BUILTINS with
 * their segments used by whole instances, the return fp and pc, then extra segments (arrays),
 * whose recorded sizes are the cells written while pointers into them may lie past that (a
 * reserved segment; cairo-lang and cairo-vm accept it). The execution's first cells are the
 * builtin bases, its last the builtins' final pointers; the output is the Ok variant (0) then
 * the array, its length then its words (fibonacci numbers). additional_data.json lists the
 * Pedersen instances as cairo-vm does. Builtin cells hold values of the right range, not the
 * builtins' results: the PIE satisfies the validity rules, it is not a run.
 */
async function generateCairo1Pie(options: GeneratePieOptions): Promise<GeneratedPie> {
  const seed = options.seed ?? 1
  const programSize = options.programWords ?? CAIRO1_DEFAULT_PROGRAM
  if (!Number.isInteger(programSize) || programSize < CAIRO1_MIN_PROGRAM || programSize >= TWO_POW_30) {
    throw new InvalidInputError(
      `programWords must be an integer from ${CAIRO1_MIN_PROGRAM} to 2^30 - 1, got ${programSize}`,
    )
  }
  const program = instructionLike([], programSize, seed)
  const totalCells = Math.floor(options.memoryBytes / CELL_SIZE)
  const count = (seed % 8) + 4
  const output = [0n, BigInt(count), ...Array.from({ length: count }, (_, k) => fibonacci(k + 1))]

  // Segments: program 0, execution 1, builtins 2.., ret_fp, ret_pc, then the arrays.
  const instances = (share: number) => Math.max(1, Math.floor(totalCells / share))
  const builtinSizes = {
    output: output.length,
    pedersen: 3 * instances(400),
    range_check: instances(100),
    bitwise: 5 * instances(800),
    poseidon: 6 * instances(800),
  }
  const builtinIndex = (name: (typeof CAIRO1_BUILTINS)[number]) => 2 + CAIRO1_BUILTINS.indexOf(name)
  const retFp = 2 + CAIRO1_BUILTINS.length
  const retPc = retFp + 1
  const arraySize = Math.max(4, Math.floor(totalCells / 200))
  const arrays = Array.from({ length: CAIRO1_ARRAYS }, (_, k) => ({ segment: retPc + 1 + k, size: arraySize }))
  const fixedCells = programSize + Object.values(builtinSizes).reduce((a, b) => a + b, 0) + CAIRO1_ARRAYS * arraySize
  const executionSize = totalCells - fixedCells
  if (executionSize < MIN_EXECUTION + 2 * CAIRO1_BUILTINS.length) {
    const needed = (fixedCells + MIN_EXECUTION + 2 * CAIRO1_BUILTINS.length) * CELL_SIZE
    throw new InvalidInputError(
      `memory.bin of ${options.memoryBytes} bytes is too small for a Cairo 1 shaped PIE; at least ${needed} bytes`,
    )
  }
  if (executionSize >= TWO_POW_30)
    throw new InvalidInputError('memory.bin too large: the execution segment must stay below 2^30 cells')
  const nSteps = executionSize
  const dir = options.outDir
  await mkdir(dir, { recursive: true })

  const segment = (index: number, size: number) => `{"index": ${index}, "size": ${size}}`
  const builtinSegments = CAIRO1_BUILTINS.map(
    (name) => `"${name}": ${segment(builtinIndex(name), builtinSizes[name])}`,
  ).join(', ')
  const metadata =
    `{"program": {"prime": ${STARK_PRIME}, "data": [${program.join(', ')}], ` +
    `"builtins": [${CAIRO1_BUILTINS.map((name) => `"${name}"`).join(', ')}], "main": 0}, ` +
    `"program_segment": ${segment(0, programSize)}, "execution_segment": ${segment(1, executionSize)}, ` +
    `"ret_fp_segment": ${segment(retFp, 0)}, "ret_pc_segment": ${segment(retPc, 0)}, ` +
    `"builtin_segments": {${builtinSegments}}, ` +
    `"extra_segments": [${arrays.map((array) => segment(array.segment, array.size)).join(', ')}]}`
  await writeFile(join(dir, METADATA), metadata)
  const counters = CAIRO1_BUILTINS.map(
    (name) => `"${name}_builtin": ${builtinSizes[name] / CELLS_PER_INSTANCE[name]}`,
  ).join(', ')
  await writeFile(
    join(dir, EXECUTION_RESOURCES),
    `{"n_steps": ${nSteps}, "builtin_instance_counter": {${counters}}, "n_memory_holes": 0}`,
  )
  const pedersenResults = Array.from(
    { length: builtinSizes.pedersen / 3 },
    (_, k) => `[${builtinIndex('pedersen')}, ${3 * k + 2}]`,
  )
  await writeFile(
    join(dir, ADDITIONAL_DATA),
    `{"output_builtin": {"pages": {}, "attributes": {}}, "pedersen_builtin": [${pedersenResults.join(', ')}], ` +
      `"range_check_builtin": null, "bitwise_builtin": null, "poseidon_builtin": null}`,
  )
  await writeFile(join(dir, VERSION), '{"cairo_pie": "1.1"}')

  const random = prng(seed ^ 0xca1)
  const felt = () => {
    let value = BigInt(random() & 0x07ffffff) // below 2^251 < prime
    for (let k = 0; k < 7; k++) value = (value << 32n) | BigInt(random())
    return value
  }
  const word64 = () => (BigInt(random()) << 32n) | BigInt(random())
  const memory = await MemoryWriter.open(join(dir, MEMORY), options.signal)
  try {
    await memory.cells(0, program.length, (offset) => program[offset]!)
    const bases = CAIRO1_BUILTINS.map((name) => ({ segment: builtinIndex(name), offset: 0 }))
    const ends = CAIRO1_BUILTINS.map((name) => ({ segment: builtinIndex(name), offset: builtinSizes[name] })).reverse()
    await memory.run(
      executionSize,
      executionFiller(executionSize, seed, {
        entry: [...bases, { segment: retFp, offset: 0 }, { segment: retPc, offset: 0 }],
        exit: ends,
        arrays,
      }),
    )
    await memory.cells(builtinIndex('output'), output.length, (k) => output[k]!)
    await memory.cells(builtinIndex('pedersen'), builtinSizes.pedersen, felt)
    await memory.cells(builtinIndex('range_check'), builtinSizes.range_check, () => (word64() << 64n) | word64())
    // Each instance: x, y, x & y, x ^ y, x | y.
    let instance: bigint[] = []
    await memory.cells(builtinIndex('bitwise'), builtinSizes.bitwise, (k) => {
      if (k % 5 === 0) {
        const [x, y] = [word64(), word64()]
        instance = [x, y, x & y, x ^ y, x | y]
      }
      return instance[k % 5]!
    })
    await memory.cells(builtinIndex('poseidon'), builtinSizes.poseidon, felt)
    // Each array: its words, some of them pointers to the next array (an array of spans).
    for (const [a, array] of arrays.entries()) {
      const next = arrays[(a + 1) % arrays.length]!
      await memory.cells(array.segment, array.size, (k) =>
        k % 4 === 3 ? { segment: next.segment, offset: k } : BigInt(random() & 0xffffff),
      )
    }
    await memory.flush()
  } finally {
    await memory.close()
  }
  return {
    dir,
    memoryBytes: totalCells * CELL_SIZE,
    cells: totalCells,
    executionSize,
    nSteps,
    output,
    programWords: programSize,
  }
}

/** memory.bin written front to back through one 4 MiB buffer, so any size takes flat memory. */
class MemoryWriter {
  private readonly buffer = new Uint8Array(CHUNK_CELLS * CELL_SIZE)
  private readonly view = new DataView(this.buffer.buffer)
  private used = 0
  private readonly handle: FileHandle
  private readonly signal: AbortSignal | undefined
  private constructor(handle: FileHandle, signal: AbortSignal | undefined) {
    this.handle = handle
    this.signal = signal
  }

  static async open(path: string, signal: AbortSignal | undefined): Promise<MemoryWriter> {
    return new MemoryWriter(await open(path, 'w'), signal)
  }

  async flush(): Promise<void> {
    if (this.signal?.aborted) throw new AbortedError('Generating the PIE was aborted', { cause: this.signal.reason })
    let done = 0
    while (done < this.used) done += (await this.handle.write(this.buffer, done, this.used - done)).bytesWritten
    this.used = 0
  }

  /** `count` cells of `segment`, offsets 0 to count - 1, from `value` in order: awaits only to flush a full buffer. */
  async cells(segment: number, count: number, value: (offset: number) => bigint | Pointer): Promise<void> {
    await this.run(count, (view, at, first, n) => {
      for (let k = 0; k < n; k++) writeCell(view, at + k * CELL_SIZE, segment, first + k, value(first + k))
    })
  }

  /** `count` cells from the filler, offsets 0 to count - 1, a buffer's worth at a time. */
  async run(count: number, fill: (view: DataView, at: number, first: number, count: number) => void): Promise<void> {
    let offset = 0
    while (offset < count) {
      if (this.used === this.buffer.length) await this.flush()
      const n = Math.min(count - offset, CHUNK_CELLS - this.used / CELL_SIZE)
      fill(this.view, this.used, offset, n)
      this.used += n * CELL_SIZE
      offset += n
    }
  }

  close(): Promise<void> {
    return this.handle.close()
  }
}

type Pointer = { segment: number; offset: number }

/**
 * What the execution cells point at besides themselves and the program: the pointers a run's
 * first cells hold (builtin bases, then the return fp and pc), those its last cells hold (the
 * builtins' final pointers), and for a Cairo 1 shape the arrays (extra segments) its frames
 * point into.
 */
type ExecutionShape = {
  entry: readonly Pointer[]
  exit: readonly Pointer[]
  arrays?: readonly { segment: number; size: number }[]
}

/** Writes execution cells [first, first + count) at `at`; the cell contents depend only on offset and seed order. */
function executionFiller(size: number, seed: number, shape: ExecutionShape) {
  const random = prng(seed)
  const nearPrime = Array.from({ length: 16 }, (_, k) => toWords(STARK_PRIME - BigInt(k + 1)))
  const ptrTop = 0x80000000 // bit 255 in the top value word
  const programPcs = [10, 16, 20, 24]

  const setAddress = (view: DataView, at: number, offset: number) => {
    view.setUint32(at, offset, true)
    view.setUint32(at + 4, 0x80000000 | (1 << 15), true)
  }
  const setSmall = (view: DataView, at: number, value: number) => {
    view.setUint32(at + 8, value >>> 0, true)
    for (let k = 1; k < 8; k++) view.setUint32(at + 8 + 4 * k, 0, true)
  }
  const setWords = (view: DataView, at: number, words: Uint32Array) => {
    for (let k = 0; k < 8; k++) view.setUint32(at + 8 + 4 * k, words[k]!, true)
  }
  const setFelt = (view: DataView, at: number) => {
    for (let k = 0; k < 7; k++) view.setUint32(at + 8 + 4 * k, random(), true)
    view.setUint32(at + 36, random() & 0x07ffffff, true) // below 2^251 < prime
  }
  const setPointer = (view: DataView, at: number, segment: number, offset: number) => {
    view.setUint32(at + 8, offset, true)
    view.setUint32(at + 12, (segment << 15) >>> 0, true)
    for (let k = 2; k < 7; k++) view.setUint32(at + 8 + 4 * k, 0, true)
    view.setUint32(at + 36, ptrTop, true)
  }

  return (view: DataView, at: number, first: number, count: number) => {
    for (let i = 0; i < count; i++, at += CELL_SIZE) {
      const offset = first + i
      setAddress(view, at, offset)
      // The first cells mirror a real run's entry (builtin bases, return fp, return pc), the
      // last ones its end (the builtins' final pointers).
      const fromEnd = size - 1 - offset
      if (offset < shape.entry.length) setPointer(view, at, shape.entry[offset]!.segment, shape.entry[offset]!.offset)
      else if (fromEnd < shape.exit.length)
        setPointer(view, at, shape.exit[fromEnd]!.segment, shape.exit[fromEnd]!.offset)
      else {
        const frame = Math.floor(offset / FRAME)
        switch (offset % FRAME) {
          case 0:
            setSmall(view, at, frame) // loop counter
            break
          case 1:
            setPointer(view, at, 1, Math.max(0, offset - FRAME)) // previous frame pointer
            break
          case 2:
            setPointer(view, at, 0, programPcs[frame & 3]!) // return pc
            break
          case 3:
          case 6: {
            const r = random()
            if (r < FELT_THRESHOLD) setFelt(view, at)
            else setSmall(view, at, r & 0xfffff)
            break
          }
          case 4: {
            const r = random()
            if (r & 1) setWords(view, at, nearPrime[(r >>> 1) & 15]!)
            else setSmall(view, at, (r >>> 1) & 0x3ff)
            break
          }
          case 5:
            if (shape.arrays) {
              // An array's cursor: anywhere in it, at its end, or past the cells written so
              // far (a reserved segment; a pointer's offset is not bounded by the size).
              const array = shape.arrays[frame % shape.arrays.length]!
              setPointer(view, at, array.segment, frame % (array.size + 8))
            } else setSmall(view, at, frame & 1)
            break
          default:
            setPointer(view, at, 1, offset - 2) // a local variable's address
        }
      }
    }
  }
}
