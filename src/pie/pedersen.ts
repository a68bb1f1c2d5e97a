/**
 * Starknet's Pedersen hash, fast for long hash chains (the Pedersen program hash is one hash
 * per program word).
 *
 * pedersen(a, b) = x(P0 + low(a)·P1 + high(a)·P2 + low(b)·P3 + high(b)·P4), with low = the
 * low 248 bits and high = the top 4. Every term is a scalar multiple of a fixed point, so
 * precomputed window tables (table[j][d] = d·2^(w·j)·P) turn each multiplication into one
 * point addition per w-bit window of the scalar. In a chain h(d0, h(d1, ...)) the `a` half of
 * every step depends only on the word, so it is computed for a whole batch of words ahead and
 * normalised to affine with one shared inversion; the step that depends on the chain then
 * starts from that affine point and adds the windows of `b`. Points are kept in Jacobian
 * coordinates and tables in affine ones (mixed addition), so each step costs one inversion
 * (to read the x coordinate the next step needs).
 *
 * Checked against @scure/starknet (the reference implementation) by property tests and
 * against the published vectors of pie-and-facts.md.
 */
import { InvalidInputError } from '../core/errors.ts'

const P = 2n ** 251n + 17n * 2n ** 192n + 1n
const LOW_BITS = 248n
const LOW_MASK = (1n << LOW_BITS) - 1n

// The curve y² = x³ + x + β and the five Pedersen points (StarkWare's constants, derived from
// the digits of π; the same as @scure/starknet's and cairo-lang's).
type Affine = { x: bigint; y: bigint }
const SHIFT_POINT: Affine = {
  x: 2089986280348253421170679821480865132823066470938446095505822317253594081284n,
  y: 1713931329540660377023406109199410414810705867260802078187082345529207694986n,
}
const BASES: readonly Affine[] = [
  {
    x: 996781205833008774514500082376783249102396023663454813447423147977397232763n,
    y: 1668503676786377725805489344771023921079126552019160156920634619255970485781n,
  },
  {
    x: 2251563274489750535117886426533222435294046428347329203627021249169616184184n,
    y: 1798716007562728905295480679789526322175868328062420237419143593021674992973n,
  },
  {
    x: 2138414695194151160943305727036575959195309218611738193261179310511854807447n,
    y: 113410276730064486255102093846540133784865286929052426931474106396135072156n,
  },
  {
    x: 2379962749567351885752724891227938183011949129833673362440656643086021394946n,
    y: 776496453633298175483985398648758586525933812536653089401905292063708816422n,
  },
]

const mod = (a: bigint) => {
  const r = a % P
  return r < 0n ? r + P : r
}

/** a⁻¹ mod P by the extended Euclidean algorithm, tracking only the coefficient needed. */
export function invertModP(value: bigint): bigint {
  let a = mod(value)
  if (a === 0n) throw new RangeError('0 has no inverse')
  let b = P
  let x = 0n
  let u = 1n
  while (a !== 0n) {
    const q = b / a
    const r = b - q * a
    const m = x - u * q
    b = a
    a = r
    x = u
    u = m
  }
  return x < 0n ? x + P : x
}

/** A point in Jacobian coordinates (x = X/Z², y = Y/Z³); Z = 0 is the point at infinity. */
type Jacobian = { X: bigint; Y: bigint; Z: bigint }

function double(p: Jacobian): Jacobian {
  if (p.Z === 0n || p.Y === 0n) return { X: 0n, Y: 1n, Z: 0n }
  // dbl-2007-bl for a = 1: M = 3X² + Z⁴.
  const XX = (p.X * p.X) % P
  const YY = (p.Y * p.Y) % P
  const YYYY = (YY * YY) % P
  const ZZ = (p.Z * p.Z) % P
  const S = mod(2n * ((p.X + YY) ** 2n - XX - YYYY))
  const M = (3n * XX + ZZ * ZZ) % P
  const X3 = mod(M * M - 2n * S)
  const Y3 = mod(M * (S - X3) - 8n * YYYY)
  const Z3 = mod((p.Y + p.Z) ** 2n - YY - ZZ)
  return { X: X3, Y: Y3, Z: Z3 }
}

/** p + q with q affine (madd-2007-bl), handling infinity, doubling and opposite points. */
function addAffine(p: Jacobian, qx: bigint, qy: bigint): Jacobian {
  if (p.Z === 0n) return { X: qx, Y: qy, Z: 1n }
  const Z1Z1 = (p.Z * p.Z) % P
  const U2 = (qx * Z1Z1) % P
  const S2 = (((qy * p.Z) % P) * Z1Z1) % P
  const H = mod(U2 - p.X)
  const r0 = mod(S2 - p.Y)
  if (H === 0n) return r0 === 0n ? double({ X: qx, Y: qy, Z: 1n }) : { X: 0n, Y: 1n, Z: 0n }
  const HH = (H * H) % P
  const I = 4n * HH
  const J = (H * I) % P
  const r = 2n * r0
  const V = (p.X * I) % P
  const X3 = mod(r * r - J - 2n * V)
  const Y3 = mod(r * (V - X3) - ((2n * p.Y * J) % P))
  const Z3 = mod((p.Z + H) ** 2n - Z1Z1 - HH)
  return { X: X3, Y: Y3, Z: Z3 }
}

/** Affine forms of many Jacobian points with one inversion (Montgomery's trick). */
function toAffineMany(points: readonly Jacobian[]): (Affine | undefined)[] {
  const prefix: bigint[] = new Array(points.length)
  let acc = 1n
  for (let i = 0; i < points.length; i++) {
    prefix[i] = acc
    const z = points[i]!.Z
    if (z !== 0n) acc = (acc * z) % P
  }
  let inv = invertModP(acc)
  const out: (Affine | undefined)[] = new Array(points.length)
  for (let i = points.length - 1; i >= 0; i--) {
    const p = points[i]!
    if (p.Z === 0n) continue
    const zInv = (inv * prefix[i]!) % P
    inv = (inv * p.Z) % P
    const zz = (zInv * zInv) % P
    out[i] = { x: (p.X * zz) % P, y: (((p.Y * zz) % P) * zInv) % P }
  }
  return out
}

/**
 * Fixed-base window table of a point for scalars of `bits` bits: windows of `w` bits, for each
 * window j the affine points d·2^(w·j)·base for d = 1 .. 2^w - 1, flattened into xs and ys.
 */
type WindowTable = { w: number; windows: number; xs: bigint[]; ys: bigint[] }

function buildTable(base: Affine, bits: number, w: number): WindowTable {
  const windows = Math.ceil(bits / w)
  const size = (1 << w) - 1
  const jacobian: Jacobian[] = []
  let windowBase: Jacobian = { X: base.x, Y: base.y, Z: 1n }
  for (let j = 0; j < windows; j++) {
    const baseAffine = toAffineMany([windowBase])[0]!
    let multiple: Jacobian = { X: baseAffine.x, Y: baseAffine.y, Z: 1n }
    for (let d = 1; d <= size; d++) {
      jacobian.push(multiple)
      if (d < size) multiple = addAffine(multiple, baseAffine.x, baseAffine.y)
    }
    for (let k = 0; k < w; k++) windowBase = double(windowBase)
  }
  const affine = toAffineMany(jacobian)
  const xs: bigint[] = new Array(affine.length)
  const ys: bigint[] = new Array(affine.length)
  for (let i = 0; i < affine.length; i++) {
    // d·2^(wj)·P is never infinity: the points' order is far above 2^252.
    xs[i] = affine[i]!.x
    ys[i] = affine[i]!.y
  }
  return { w, windows, xs, ys }
}

/** p + scalar·base using the base's table (scalar < 2^(w·windows)). */
function addMultiple(p: Jacobian, table: WindowTable, scalar: bigint): Jacobian {
  const { w, xs, ys } = table
  const size = (1 << w) - 1
  const mask = BigInt(size)
  const shift = BigInt(w)
  let acc = p
  let s = scalar
  for (let j = 0; s !== 0n; j++) {
    const digit = Number(s & mask)
    if (digit !== 0) {
      const at = j * size + digit - 1
      acc = addAffine(acc, xs[at]!, ys[at]!)
    }
    s >>= shift
  }
  return acc
}

// Tables: the low parts (248 bits) with 8-bit windows (31 windows of 255 points), the high
// parts (4 bits) with one 4-bit window. Built on first use (~0.1 s).
let tables: { low: WindowTable[]; high: WindowTable[] } | undefined
function getTables() {
  tables ??= {
    low: [buildTable(BASES[0]!, 248, 8), buildTable(BASES[2]!, 248, 8)],
    high: [buildTable(BASES[1]!, 4, 4), buildTable(BASES[3]!, 4, 4)],
  }
  return tables
}

// For long chains, the chain-dependent low part (P3) gets 12-bit windows: 21 additions a step
// instead of 31, for a table of 86,000 points (~10 MiB, built in well under a second, which
// chains above this length repay).
const WIDE_TABLE_MIN_CHAIN = 8192
let wideTable: WindowTable | undefined
function getWideTable(): WindowTable {
  wideTable ??= buildTable(BASES[2]!, 248, 12)
  return wideTable
}

function checkFelt(value: bigint): void {
  if (value < 0n || value >= P) throw new InvalidInputError(`Pedersen input ${value} is not a field element (0 <= x < P)`)
}

/** P0 + low(a)·P1 + high(a)·P2: the half of a hash that depends on the first input only. */
function firstHalf(a: bigint): Jacobian {
  const t = getTables()
  let point: Jacobian = { X: SHIFT_POINT.x, Y: SHIFT_POINT.y, Z: 1n }
  point = addMultiple(point, t.low[0]!, a & LOW_MASK)
  return addMultiple(point, t.high[0]!, a >> LOW_BITS)
}

/** start + low(b)·P3 + high(b)·P4, and its affine x. */
function secondHalfX(start: Jacobian, b: bigint, low: WindowTable = getTables().low[1]!): bigint {
  const t = getTables()
  let point = addMultiple(start, low, b & LOW_MASK)
  point = addMultiple(point, t.high[1]!, b >> LOW_BITS)
  if (point.Z === 0n) throw new Error('Pedersen hash reached the point at infinity')
  const zInv = invertModP(point.Z)
  return (point.X * ((zInv * zInv) % P)) % P
}

/** Starknet Pedersen hash of two field elements. */
export function pedersenHash(a: bigint, b: bigint): bigint {
  checkFelt(a)
  checkFelt(b)
  return secondHalfX(firstHalf(a), b)
}

// Words whose first halves are computed (and normalised together) ahead of the chain.
const BATCH = 512

/**
 * The steps of h(v0, h(v1, ... h(v[n-2], v[n-1]))): the first halves of a batch of words are
 * computed ahead and normalised with one inversion, then the chain adds the second halves.
 * Yields after each batch (a point where an async caller can let other work run); returns
 * the hash.
 */
function* chainSteps(values: readonly bigint[]): Generator<void, bigint, void> {
  if (values.length === 0) throw new InvalidInputError('hash chain of nothing')
  for (const value of values) checkFelt(value)
  const low = values.length >= WIDE_TABLE_MIN_CHAIN ? getWideTable() : getTables().low[1]!
  let acc = values[values.length - 1]!
  let end = values.length - 1
  while (end > 0) {
    const start = Math.max(0, end - BATCH)
    const halves = toAffineMany(values.slice(start, end).map(firstHalf))
    for (let i = end - 1; i >= start; i--) {
      const half = halves[i - start]
      const point: Jacobian = half ? { X: half.x, Y: half.y, Z: 1n } : { X: 0n, Y: 1n, Z: 0n }
      acc = secondHalfX(point, acc, low)
    }
    end = start
    yield
  }
  return acc
}

/** h(v0, h(v1, ... h(v[n-2], v[n-1]))), on the calling thread, start to end. */
export function fastPedersenHashChain(values: readonly bigint[], signal?: AbortSignal): bigint {
  const steps = chainSteps(values)
  for (;;) {
    signal?.throwIfAborted()
    const step = steps.next()
    if (step.done) return step.value
  }
}

/**
 * The same, letting the event loop run between batches of 512 words (a few tens of
 * milliseconds), so a long chain can be hashed while an upload or a wait goes on.
 */
export async function fastPedersenHashChainAsync(values: readonly bigint[], signal?: AbortSignal): Promise<bigint> {
  const steps = chainSteps(values)
  for (;;) {
    signal?.throwIfAborted()
    const step = steps.next()
    if (step.done) return step.value
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}
