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
import { mkdir, open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AbortedError, InvalidInputError } from '../core/errors.ts'
import { ADDITIONAL_DATA, EXECUTION_RESOURCES, MEMORY, METADATA, STARK_PRIME, TWO_POW_30, VERSION } from './format.ts'
import { CELL_SIZE, toWords, writeCell } from './memory.ts'

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

export type GeneratePieOptions = {
  outDir: string
  /** Target size of memory.bin in bytes (rounded down to whole cells; at least ~2 KiB). */
  memoryBytes: number
  /**
   * Words of program (default: fibonacci's 27). Above that, fibonacci's words are followed by
   * instruction-like filler (63-bit encodings, small immediates, negative constants), so the
   * program hash has a real size to chew on. memory.bin holds them too.
   */
  programWords?: number
  seed?: number
  signal?: AbortSignal
}

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

/** Parses "1GiB", "512MiB", "10MiB", "64KiB", "1G", "1000" (bytes; binary multiples). */
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
  const data: bigint[] = FIBONACCI_PROGRAM.data.slice(0, Math.max(count, FIBONACCI_SIZE))
  const random = prng(seed ^ 0x5eed)
  while (data.length < count) {
    const kind = random() & 7
    if (kind < 5) data.push((BigInt(0x40000000 | (random() & 0x3fffffff)) << 32n) | BigInt(random()))
    else if (kind < 7) data.push(BigInt(random() & 0xffff))
    else data.push(STARK_PRIME - BigInt(1 + (random() & 0xff)))
  }
  return data
}

/** Generates a valid PIE directory (metadata, memory, additional data, resources, version). */
export async function generatePie(options: GeneratePieOptions): Promise<GeneratedPie> {
  const seed = options.seed ?? 1
  const programSize = options.programWords ?? FIBONACCI_SIZE
  if (!Number.isInteger(programSize) || programSize < FIBONACCI_SIZE || programSize >= TWO_POW_30) {
    throw new InvalidInputError(`programWords must be an integer from ${FIBONACCI_SIZE} to 2^30 - 1, got ${programSize}`)
  }
  const program = syntheticProgram(programSize, seed)
  const totalCells = Math.floor(options.memoryBytes / CELL_SIZE)
  const executionSize = totalCells - programSize - OUTPUT_SIZE
  if (executionSize < MIN_EXECUTION) {
    throw new InvalidInputError(
      `memory.bin of ${options.memoryBytes} bytes is too small; at least ${(programSize + OUTPUT_SIZE + MIN_EXECUTION) * CELL_SIZE} bytes`,
    )
  }
  if (executionSize >= TWO_POW_30) throw new InvalidInputError('memory.bin too large: the execution segment must stay below 2^30 cells')
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

  const handle = await open(join(dir, MEMORY), 'w')
  try {
    const buffer = new Uint8Array(CHUNK_CELLS * CELL_SIZE)
    const view = new DataView(buffer.buffer)
    let used = 0
    const flush = async () => {
      if (options.signal?.aborted) throw new AbortedError('Generating the PIE was aborted', { cause: options.signal.reason })
      let done = 0
      while (done < used) done += (await handle.write(buffer, done, used - done)).bytesWritten
      used = 0
    }
    for (let offset = 0; offset < program.length; offset++) {
      writeCell(view, used, 0, offset, program[offset]!)
      used += CELL_SIZE
      if (used === buffer.length) await flush()
    }
    const fill = executionFiller(executionSize, seed)
    let offset = 0
    while (offset < executionSize) {
      const count = Math.min(executionSize - offset, CHUNK_CELLS - used / CELL_SIZE)
      fill(view, used, offset, count)
      used += count * CELL_SIZE
      offset += count
      if (used === buffer.length) await flush()
    }
    if (used + OUTPUT_SIZE * CELL_SIZE > buffer.length) await flush()
    output.forEach((value, k) => {
      writeCell(view, used, 2, k, value)
      used += CELL_SIZE
    })
    await flush()
  } finally {
    await handle.close()
  }
  return { dir, memoryBytes: totalCells * CELL_SIZE, cells: totalCells, executionSize, nSteps, output, programWords: programSize }
}

/** Writes execution cells [first, first + count) at `at`; the cell contents depend only on offset and seed order. */
function executionFiller(size: number, seed: number) {
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
      // The first cells mirror a real run's entry: output pointer, return fp, return pc.
      if (offset === 0) setPointer(view, at, 2, 0)
      else if (offset === 1) setPointer(view, at, 3, 0)
      else if (offset === 2) setPointer(view, at, 4, 0)
      else if (offset === size - 1)
        setPointer(view, at, 2, OUTPUT_SIZE) // final output pointer
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
            setSmall(view, at, frame & 1)
            break
          default:
            setPointer(view, at, 1, offset - 2) // a local variable's address
        }
      }
    }
  }
}
