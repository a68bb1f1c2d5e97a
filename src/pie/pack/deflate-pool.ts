/**
 * Compressing independent blocks of a file on worker threads, pigz's way: each block is a raw
 * DEFLATE stream ended with a sync flush (byte-aligned, not final), the last one with a normal
 * finish, so the outputs concatenated in order form one valid DEFLATE stream. Every block is
 * compressed with the same settings whether it runs on a worker or inline, so the bytes do not
 * depend on the pool size.
 *
 * Memory is what shapes this design. Blocks live in "slots" of one SharedArrayBuffer (input
 * area + output area each): the caller reads the file into a slot, a worker compresses it into
 * the slot's output area, the caller writes it out and reuses the slot. Nothing is allocated
 * per block on the calling thread, and on a worker zlib's output buffer is sized to hold a
 * whole block's output, so each block costs one allocation of which only the written pages
 * become resident. (With zlib's default small output chunks plus a concatenation, dead buffers
 * pile up to V8's external-memory GC trigger, ~64 MiB per thread, before they are freed.)
 *
 * A caller that keeps the compressed bytes (an upload holds them until they are sent) asks for
 * `ownOutput`: a worker then moves zlib's own output buffer to the caller instead of writing into
 * the slot, sized from the previous block's output (an eighth more) so that what the caller holds
 * is about the data's size: V8 counts each such buffer whole towards the external memory that
 * triggers its full collections (with worst-case-sized buffers, `prove <dir>` on a 1 GiB
 * memory.bin ran 32 mark-compacts instead of 14). Copying into a buffer of the exact size, as
 * before that, cost a fresh page fault per 4 KiB and ~0.1 s of system time per 256 MiB of input.
 * Copying out of the shared slot on the calling thread would cost more: V8 copies shared memory
 * element by element in code it has not optimized yet (~2.5-7 ms a MiB measured, a fifth of the
 * main thread's time while uploading), which the few hundred calls of a pack never leave.
 *
 * The worker's code is a string evaluated by `new Worker(code, { eval: true })`: there is no
 * second file to locate, which keeps this working from src/ (.ts), from lib/ (.js) and inside
 * a single-file ncc bundle alike.
 */
import { Worker } from 'node:worker_threads'
import zlib from 'node:zlib'

export type CompressedBlock = {
  /** The block's raw DEFLATE bytes; valid until the slot is reused, or the caller's with `ownOutput`. */
  data: Uint8Array
  /** CRC-32 of the block's uncompressed bytes. */
  crc32: number
}

export type BlockCompressor = {
  readonly slots: number
  readonly blockSize: number
  /** The input area of a slot (blockSize bytes): fill it, then call `compress`. */
  input(slot: number): Uint8Array
  /** `memLevel` (zlib's, 1-9; default 8): 9 deflates ~13% faster at level 1, for 128 KiB more per stream. */
  compress(slot: number, length: number, final: boolean, memLevel?: number): Promise<CompressedBlock>
  close(): Promise<void>
}

/** Room for a block's compressed output even when it does not compress (zlib's bound, padded). */
export function outputCapacity(blockSize: number): number {
  return blockSize + (blockSize >>> 3) + (blockSize >>> 6) + 1024
}

/** zlib's default. */
const DEFAULT_MEM_LEVEL = 8

function deflateOptions(level: number, final: boolean, chunkSize: number, memLevel: number): zlib.ZlibOptions {
  return {
    level,
    memLevel,
    chunkSize,
    finishFlush: final ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH,
  }
}

const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const zlib = require('node:zlib');
const { shared, blockSize, capacity, level, ownOutput } = workerData;
const stride = ownOutput ? blockSize : blockSize + capacity;
// With ownOutput, zlib's output buffer is sized from the last block's output (an eighth more):
// the buffer moved to the caller is then about the data's size, not the worst case's.
let lastOutput = 0;
parentPort.on('message', (m) => {
  try {
    const base = m.slot * stride;
    const input = new Uint8Array(shared, base, m.length);
    const chunkSize = ownOutput && lastOutput > 0
      ? Math.min(capacity, Math.max(2 * Buffer.poolSize, lastOutput + (lastOutput >>> 3) + 4096))
      : capacity;
    const out = zlib.deflateRawSync(input, {
      level,
      memLevel: m.memLevel,
      chunkSize,
      finishFlush: m.final ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH,
    });
    if (out.length > capacity) throw new Error('compressed block larger than its slot');
    const crc = zlib.crc32(input);
    if (ownOutput) {
      lastOutput = out.length;
      // A buffer of its own (zlib's one output chunk, or the concatenation of several), larger
      // than Buffer's pool and starting at its start, is moved rather than copied. Anything else
      // is copied, so a pooled buffer is never detached.
      let data = out;
      const own = out.byteOffset === 0 && out.buffer.byteLength > Buffer.poolSize &&
        (out.buffer.byteLength === chunkSize || out.buffer.byteLength === out.length);
      if (!own) {
        data = new Uint8Array(out.length);
        data.set(out);
      }
      parentPort.postMessage({ id: m.id, length: out.length, crc, data }, [data.buffer]);
    } else {
      new Uint8Array(shared, base + blockSize, out.length).set(out);
      parentPort.postMessage({ id: m.id, length: out.length, crc });
    }
  } catch (error) {
    parentPort.postMessage({ id: m.id, error: String((error && error.message) || error) });
  }
});
`

/** The pools whose workers still run: `closeDeflatePools` ends them before the process exits. */
const livePools = new Set<BlockCompressor>()

/**
 * Ends every pool's workers still running (a pack interrupted before its own `close`): what the
 * CLI does before it lets the process end, since exiting with worker threads alive can hang in
 * Node's shutdown (a known Node.js bug).
 */
export async function closeDeflatePools(): Promise<void> {
  await Promise.all([...livePools].map((pool) => pool.close()))
}

type Pending = {
  resolve: (block: CompressedBlock) => void
  reject: (error: Error) => void
  worker: number
  slot: number
}
type Reply = { id: number; length?: number; crc?: number; data?: Uint8Array; error?: string }

/**
 * A compressor with `slots` blocks in flight. `workers: 0` compresses inline on the calling
 * thread (for small inputs, where starting workers costs more than it saves).
 */
export function createBlockCompressor(options: {
  workers: number
  level: number
  blockSize: number
  slots: number
  /** The compressed bytes are the caller's to keep: moved from the worker, not left in the slot. */
  ownOutput?: boolean
}): BlockCompressor {
  const { level, blockSize, slots } = options
  const ownOutput = options.ownOutput === true
  const capacity = outputCapacity(blockSize)
  const stride = ownOutput ? blockSize : blockSize + capacity

  if (options.workers <= 0) {
    const inputs = Array.from({ length: slots }, () => new Uint8Array(blockSize))
    return {
      slots,
      blockSize,
      input: (slot) => inputs[slot]!,
      compress: async (slot, length, final, memLevel = DEFAULT_MEM_LEVEL) => {
        const input = inputs[slot]!.subarray(0, length)
        return {
          data: zlib.deflateRawSync(input, deflateOptions(level, final, capacity, memLevel)),
          crc32: zlib.crc32(input) >>> 0,
        }
      },
      close: async () => {},
    }
  }

  const shared = new SharedArrayBuffer(slots * stride)
  const workers: Worker[] = []
  const load: number[] = []
  const pending = new Map<number, Pending>()
  let nextId = 0
  let failure: Error | undefined

  const failAll = (error: Error) => {
    failure ??= error
    for (const [id, task] of pending) {
      pending.delete(id)
      task.reject(error)
    }
  }

  for (let w = 0; w < options.workers; w++) {
    const worker = new Worker(WORKER_CODE, {
      eval: true,
      workerData: { shared, blockSize, capacity, level, ownOutput },
    })
    worker.on('message', (reply: Reply) => {
      const task = pending.get(reply.id)
      if (!task) return
      pending.delete(reply.id)
      load[task.worker]!--
      if (reply.error !== undefined || reply.length === undefined) {
        task.reject(new Error(`deflate failed on a worker: ${reply.error}`))
        return
      }
      const data = reply.data ?? new Uint8Array(shared, task.slot * stride + blockSize, reply.length)
      task.resolve({ data, crc32: reply.crc! >>> 0 })
    })
    worker.on('error', (error) => failAll(error))
    worker.on('exit', (code) => {
      if (pending.size) failAll(new Error(`a deflate worker exited (code ${code}) with blocks in flight`))
    })
    workers.push(worker)
    load.push(0)
  }

  const pool: BlockCompressor = {
    slots,
    blockSize,
    input: (slot) => new Uint8Array(shared, slot * stride, blockSize),
    compress(slot, length, final, memLevel = DEFAULT_MEM_LEVEL) {
      if (failure) return Promise.reject(failure)
      let target = 0
      for (let w = 1; w < workers.length; w++) if (load[w]! < load[target]!) target = w
      const id = nextId++
      load[target]!++
      return new Promise<CompressedBlock>((resolve, reject) => {
        pending.set(id, { resolve, reject, worker: target, slot })
        workers[target]!.postMessage({ id, slot, length, final, memLevel })
      })
    },
    async close() {
      livePools.delete(pool)
      failAll(new Error('compressor closed'))
      await Promise.all(workers.map((worker) => worker.terminate()))
    },
  }
  livePools.add(pool)
  return pool
}
