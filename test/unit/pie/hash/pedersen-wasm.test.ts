import { readFile } from 'node:fs/promises'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GENERATED, readSource, sourceDigest } from '../../../../scripts/build-wasm.ts'
import { STARK_PRIME as P } from '../../../../src/pie/index.ts'
import { PEDERSEN_WASM_BASE64 } from '../../../../src/pie/hash/pedersen-wasm.ts'

// That the module is byte for byte what the source compiles to is checked by
// `npm run check:wasm` (CI), which installs the compiler; this test needs none.
describe('src/pie/hash/pedersen-wasm.ts', () => {
  it('was compiled from the current wasm/pedersen.ts and flags (run npm run build:wasm after changing them)', async () => {
    const committed = await readFile(GENERATED, 'utf8')
    expect(committed.split('\n')[1]).toBe(`// Source and flags: sha256 ${sourceDigest(await readSource())}.`)
  })
})

// The module's field arithmetic, checked against BigInt: every hash rests on it, and a wrong
// carry or a missed case of the inversion would show only on rare values.
type Field = {
  memory: { buffer: ArrayBuffer }
  alloc(bytes: number): number
  constants(): number
  mul(out: number, a: number, b: number): void
  sqr(out: number, a: number): void
  add(out: number, a: number, b: number): void
  sub(out: number, a: number, b: number): void
  invert(out: number, a: number): void
  toMont(out: number, a: number): void
  fromMont(out: number, a: number): void
}

describe("the module's field arithmetic modulo P", () => {
  const { Module, Instance } = (globalThis as any).WebAssembly
  const wasm = new Instance(new Module(Buffer.from(PEDERSEN_WASM_BASE64, 'base64')), {
    env: {
      abort: () => {
        throw new Error('abort')
      },
    },
  }).exports as Field
  const R = 2n ** 261n
  const write = (at: number, value: bigint) => {
    const view = new DataView(wasm.memory.buffer)
    for (let k = 0; k < 9; k++) view.setUint32(at + 4 * k, Number((value >> BigInt(29 * k)) & 0x1fffffffn), true)
  }
  const read = (at: number) => {
    const view = new DataView(wasm.memory.buffer)
    let v = 0n
    for (let k = 8; k >= 0; k--) v = (v << 29n) | BigInt(view.getUint32(at + 4 * k, true))
    return v
  }
  const c = wasm.constants()
  write(c, (R * R) % P)
  write(c + 36, 1n)
  write(c + 72, R % P)
  write(c + 108, (R * R * R) % P)
  const [a, b, out] = [wasm.alloc(36), wasm.alloc(36), wasm.alloc(36)]
  const load = (at: number, value: bigint) => {
    write(at, value)
    wasm.toMont(at, at)
  }
  const result = () => {
    wasm.fromMont(out, out)
    return read(out)
  }
  const element = fc.oneof(
    fc.bigInt({ min: 0n, max: P - 1n }),
    fc.bigInt({ min: 0n, max: 2n ** 64n }),
    fc.bigInt({ min: P - 2n ** 64n, max: P - 1n }),
    fc.constantFrom(0n, 1n, 2n, P - 1n, P - 2n, 2n ** 192n, 2n ** 251n, 2n ** 29n - 1n, 2n ** 30n, (P - 1n) / 2n),
  )

  it('multiplies, squares, adds and subtracts as BigInt does (5,000 pairs)', () => {
    fc.assert(
      fc.property(element, element, (x, y) => {
        load(a, x)
        load(b, y)
        wasm.mul(out, a, b)
        expect(result()).toBe((x * y) % P)
        wasm.sqr(out, a)
        expect(result()).toBe((x * x) % P)
        wasm.add(out, a, b)
        expect(result()).toBe((x + y) % P)
        wasm.sub(out, a, b)
        expect(result()).toBe((((x - y) % P) + P) % P)
      }),
      { numRuns: 5000 },
    )
  })

  it('inverts every non-zero element (5,000 values)', () => {
    fc.assert(
      fc.property(
        element.filter((x) => x !== 0n),
        (x) => {
          load(a, x)
          wasm.invert(out, a)
          expect((result() * x) % P).toBe(1n)
        },
      ),
      { numRuns: 5000 },
    )
  })
})
