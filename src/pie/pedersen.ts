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
 * (to read the x coordinate the next step needs). The chain's arithmetic runs on 23-bit limbs
 * in doubles (stark-field.ts), which allocates nothing; tables are built, and single hashes
 * computed, with BigInt.
 *
 * Measured (CPU time, 2-core EPYC): ~100 µs a word on a long chain against @scure/starknet's
 * ~1.2 ms, so a 100,000-word program hashes in about 10 s (bench figure 7).
 *
 * Checked against @scure/starknet (the reference implementation) by property tests and
 * against the published vectors of pie-and-facts.md.
 */
import { InvalidInputError } from '../core/errors.ts'
import { addFast, type Fe, fe, fromMont, isZero, LIMBS, mulFast, R2_MOD_P, readRaw, subFast, toMont, writeRaw } from './stark-field.ts'

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

function* buildTableSteps(base: Affine, bits: number, w: number): Generator<void, WindowTable, void> {
  const windows = Math.ceil(bits / w)
  const size = (1 << w) - 1
  const xs: bigint[] = []
  const ys: bigint[] = []
  let windowBase: Jacobian = { X: base.x, Y: base.y, Z: 1n }
  for (let j = 0; j < windows; j++) {
    const baseAffine = toAffineMany([windowBase])[0]!
    const jacobian: Jacobian[] = []
    let multiple: Jacobian = { X: baseAffine.x, Y: baseAffine.y, Z: 1n }
    for (let d = 1; d <= size; d++) {
      jacobian.push(multiple)
      if (d < size) multiple = addAffine(multiple, baseAffine.x, baseAffine.y)
    }
    // d·2^(wj)·P is never infinity: the points' order is far above 2^252.
    for (const point of toAffineMany(jacobian)) {
      xs.push(point!.x)
      ys.push(point!.y)
    }
    for (let k = 0; k < w; k++) windowBase = double(windowBase)
    // A window at a time, so an async caller keeps its event loop going while tables build.
    yield
  }
  return { w, windows, xs, ys }
}

function runSteps<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const step = steps.next()
    if (step.done) return step.value
  }
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
type Tables = { low: WindowTable[]; high: WindowTable[] }
let tables: Tables | undefined
function* tablesSteps(): Generator<void, Tables, void> {
  if (!tables) {
    const low0 = yield* buildTableSteps(BASES[0]!, 248, 8)
    const low1 = yield* buildTableSteps(BASES[2]!, 248, 8)
    const high0 = yield* buildTableSteps(BASES[1]!, 4, 4)
    const high1 = yield* buildTableSteps(BASES[3]!, 4, 4)
    tables ??= { low: [low0, low1], high: [high0, high1] }
  }
  return tables
}
function getTables(): Tables {
  return tables ?? runSteps(tablesSteps())
}

// For long chains, the chain-dependent low part (P3) gets 12-bit windows: 21 additions a step
// instead of 31, for a table of 86,000 points (~15 MiB, built in about a second, which chains
// above this length repay).
const WIDE_TABLE_MIN_CHAIN = 8192
let wideTable: WindowTable | undefined
function* wideTableSteps(): Generator<void, WindowTable, void> {
  if (!wideTable) {
    const built = yield* buildTableSteps(BASES[2]!, 248, 12)
    wideTable ??= built
  }
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
  const tables = yield* limbTablesSteps()
  const low = values.length >= WIDE_TABLE_MIN_CHAIN ? yield* wideLimbTableSteps() : tables.low[1]!
  const high = tables.high[1]!
  // First halves of a batch: Jacobian points on limbs, then normalised to affine together.
  const halfX = new Float64Array(BATCH * LIMBS)
  const halfY = new Float64Array(BATCH * LIMBS)
  const halfZ = new Float64Array(BATCH * LIMBS)
  const halfInfinity = new Uint8Array(BATCH)
  const prefix = new Float64Array(BATCH * LIMBS)
  const point = new LimbPoint()
  const shift = new Float64Array(LIMBS * 2)
  toMont(shift, 0, SHIFT_POINT.x)
  toMont(shift, LIMBS, SHIFT_POINT.y)
  const acc = fe()
  const inv = fe()
  const zz = fe()
  let hash = values[values.length - 1]!
  let end = values.length - 1
  while (end > 0) {
    const start = Math.max(0, end - BATCH)
    const n = end - start
    // P0 + low(a)·P1 + high(a)·P2 for each word; prefix products of their Z for one inversion.
    acc.set(ONE)
    for (let i = 0; i < n; i++) {
      point.X.set(shift.subarray(0, LIMBS))
      point.Y.set(shift.subarray(LIMBS))
      point.Z.set(ONE)
      point.infinity = false
      addScalarLimbs(point, tables.low[0]!, tables.high[0]!, values[start + i]!)
      halfInfinity[i] = point.infinity ? 1 : 0
      halfX.set(point.X, i * LIMBS)
      halfY.set(point.Y, i * LIMBS)
      halfZ.set(point.Z, i * LIMBS)
      prefix.set(acc, i * LIMBS)
      if (!point.infinity) mulFast(acc, acc, point.Z)
    }
    invertLimbs(inv, acc)
    for (let i = n - 1; i >= 0; i--) {
      if (halfInfinity[i]) continue
      const z = halfZ.subarray(i * LIMBS, (i + 1) * LIMBS)
      mulFast(zInv, inv, prefix.subarray(i * LIMBS, (i + 1) * LIMBS))
      mulFast(inv, inv, z)
      mulFast(zz, zInv, zInv)
      const x = halfX.subarray(i * LIMBS, (i + 1) * LIMBS)
      const y = halfY.subarray(i * LIMBS, (i + 1) * LIMBS)
      mulFast(x, x, zz)
      mulFast(zz, zz, zInv)
      mulFast(y, y, zz)
    }
    // The chain: from each word's affine first half, add low(hash)·P3 + high(hash)·P4.
    for (let i = n - 1; i >= 0; i--) {
      if (halfInfinity[i]) point.infinity = true
      else point.setAffine(halfX, halfY, i * LIMBS)
      addScalarLimbs(point, low, high, hash)
      if (point.infinity) throw new Error('Pedersen hash reached the point at infinity')
      invertLimbs(zInv, point.Z)
      mulFast(zz, zInv, zInv)
      mulFast(zz, zz, point.X)
      hash = fromMont(zz)
    }
    end = start
    yield
  }
  return hash
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

// ---- The chain on limbs (stark-field.ts): the hot loop, without BigInt allocations. ----

/** A window table in Montgomery-form limbs: point i's x at xs[11 i ..], y at ys[11 i ..]. */
type LimbTable = { w: number; xs: Float64Array; ys: Float64Array }

function* limbTableSteps(table: WindowTable): Generator<void, LimbTable, void> {
  const xs = new Float64Array(table.xs.length * LIMBS)
  const ys = new Float64Array(table.ys.length * LIMBS)
  for (let i = 0; i < table.xs.length; i++) {
    toMont(xs, i * LIMBS, table.xs[i]!)
    toMont(ys, i * LIMBS, table.ys[i]!)
    if (i % 4096 === 4095) yield
  }
  return { w: table.w, xs, ys }
}

let limbTables: { low: LimbTable[]; high: LimbTable[] } | undefined
function* limbTablesSteps(): Generator<void, { low: LimbTable[]; high: LimbTable[] }, void> {
  if (!limbTables) {
    const t = yield* tablesSteps()
    const low = [yield* limbTableSteps(t.low[0]!), yield* limbTableSteps(t.low[1]!)]
    const high = [yield* limbTableSteps(t.high[0]!), yield* limbTableSteps(t.high[1]!)]
    limbTables ??= { low, high }
  }
  return limbTables
}
let wideLimbTable: LimbTable | undefined
function* wideLimbTableSteps(): Generator<void, LimbTable, void> {
  if (!wideLimbTable) {
    const built = yield* limbTableSteps(yield* wideTableSteps())
    wideLimbTable ??= built
  }
  return wideLimbTable
}

/** A Jacobian point on limbs, updated in place. */
class LimbPoint {
  X = fe()
  Y = fe()
  Z = fe()
  infinity = true
  setAffine(xs: Float64Array, ys: Float64Array, at: number): void {
    for (let k = 0; k < LIMBS; k++) {
      this.X[k] = xs[at + k]!
      this.Y[k] = ys[at + k]!
    }
    this.Z.set(ONE)
    this.infinity = false
  }
  toBigint(): Jacobian {
    if (this.infinity) return { X: 0n, Y: 1n, Z: 0n }
    return { X: fromMont(this.X), Y: fromMont(this.Y), Z: fromMont(this.Z) }
  }
  fromBigint(p: Jacobian): void {
    this.infinity = p.Z === 0n
    if (this.infinity) return
    toMont(this.X, 0, p.X)
    toMont(this.Y, 0, p.Y)
    toMont(this.Z, 0, p.Z)
  }
}

const ONE = fe()
toMont(ONE, 0, 1n)
const qx = fe()
const qy = fe()
const z1z1 = fe()
const u2 = fe()
const s2 = fe()
const h = fe()
const hh = fe()
const ii = fe()
const jj = fe()
const rr = fe()
const vv = fe()
const t1 = fe()
const t2 = fe()
const x3 = fe()

/** p += the affine table point at `at` (madd-2007-bl on limbs; rare cases through BigInt). */
function addAffineLimbs(p: LimbPoint, xs: Float64Array, ys: Float64Array, at: number): void {
  if (p.infinity) {
    p.setAffine(xs, ys, at)
    return
  }
  for (let k = 0; k < LIMBS; k++) {
    qx[k] = xs[at + k]!
    qy[k] = ys[at + k]!
  }
  const { X, Y, Z } = p
  mulFast(z1z1, Z, Z)
  mulFast(u2, qx, z1z1)
  mulFast(s2, qy, Z)
  mulFast(s2, s2, z1z1)
  subFast(h, u2, X)
  subFast(rr, s2, Y)
  if (isZero(h)) {
    // The same x: doubling or the point at infinity (never met on real data; done in BigInt).
    p.fromBigint(addAffine(p.toBigint(), fromMont(qx), fromMont(qy)))
    return
  }
  mulFast(hh, h, h)
  addFast(ii, hh, hh)
  addFast(ii, ii, ii)
  mulFast(jj, h, ii)
  addFast(rr, rr, rr)
  mulFast(vv, X, ii)
  // X3 = r² - J - 2V
  mulFast(t1, rr, rr)
  subFast(t1, t1, jj)
  subFast(t1, t1, vv)
  subFast(x3, t1, vv)
  // Y3 = r (V - X3) - 2 Y1 J
  subFast(t1, vv, x3)
  mulFast(t1, rr, t1)
  mulFast(t2, Y, jj)
  addFast(t2, t2, t2)
  subFast(Y, t1, t2)
  // Z3 = (Z1 + H)² - Z1Z1 - HH
  addFast(t1, Z, h)
  mulFast(t1, t1, t1)
  subFast(t1, t1, z1z1)
  subFast(Z, t1, hh)
  X.set(x3)
}

/**
 * The w-bit windows of a value's low 248 bits, least significant first, read from its hex
 * digits (w is a multiple of 4), and its high part (bits 248 and up).
 */
function windowsOf(value: bigint, w: number, out: Int32Array): number {
  const hex = value.toString(16).padStart(63, '0')
  const digitsPerWindow = w / 4
  let n = 0
  for (let end = 63; end > 1; end -= digitsPerWindow) {
    const start = Math.max(1, end - digitsPerWindow)
    let digit = 0
    for (let k = start; k < end; k++) digit = digit * 16 + hexValue(hex.charCodeAt(k))
    out[n++] = digit
  }
  return hexValue(hex.charCodeAt(0))
}

function hexValue(code: number): number {
  return code <= 57 ? code - 48 : code - 87
}

const windows = new Int32Array(64)

/** p += scalar·base for a 248-bit-low/4-bit-high scalar, through the two tables. */
function addScalarLimbs(p: LimbPoint, low: LimbTable, high: LimbTable, scalar: bigint): void {
  const top = windowsOf(scalar, low.w, windows)
  const size = (1 << low.w) - 1
  const count = Math.ceil(248 / low.w)
  for (let j = 0; j < count; j++) {
    const digit = windows[j]!
    if (digit !== 0) addAffineLimbs(p, low.xs, low.ys, (j * size + digit - 1) * LIMBS)
  }
  if (top !== 0) addAffineLimbs(p, high.xs, high.ys, (top - 1) * LIMBS)
}

const zInv = fe()

/** Inverse of a Montgomery-form element, in Montgomery form (one BigInt inversion). */
function invertLimbs(out: Fe, a: Fe): void {
  // readRaw(a) = a·R, its inverse a⁻¹·R⁻¹; times R² gives a⁻¹·R.
  writeRaw(out, 0, (invertModP(readRaw(a)) * R2_MOD_P) % P)
}
