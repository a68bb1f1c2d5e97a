/**
 * Arithmetic modulo the Stark prime P = 2^251 + 17·2^192 + 1 on plain doubles, for the hot
 * loop of the Pedersen hash (pedersen.ts): BigInt allocates for every operation, which costs
 * more than the arithmetic. An element is 11 limbs of 23 bits in a Float64Array (products of
 * two limbs have 46 bits, a column of 11 of them stays below 2^50: exact in a double), kept
 * in Montgomery form (a·R mod P, R = 2^253) and fully reduced (< P).
 *
 * Montgomery reduction is cheap for this prime: P ≡ 1 mod 2^23, so each step's multiplier is
 * just the negated low limb, and P has three non-zero limbs (1, 17·2^8 at limb 8, 2^21 at limb
 * 10), so each step touches three columns.
 */
export const P = 2n ** 251n + 17n * 2n ** 192n + 1n
export const LIMBS = 11
const RADIX = 8388608 // 2^23
const INV_RADIX = 1 / RADIX
const P8 = 4352 // 17·2^8: P's limb 8
const P10 = 2097152 // 2^21: P's limb 10
const R = 2n ** 253n
const R_MOD_P = R % P
const R2_MOD_P = (R * R) % P

export type Fe = Float64Array

export const fe = (): Fe => new Float64Array(LIMBS)

const columns = new Float64Array(2 * LIMBS)

/** out = a·b·R⁻¹ mod P (the Montgomery product); out may alias a or b. */
export function mul(out: Fe, a: Fe, b: Fe): void {
  const t = columns
  t.fill(0)
  for (let i = 0; i < LIMBS; i++) {
    const ai = a[i]!
    if (ai === 0) continue
    for (let j = 0; j < LIMBS; j++) t[i + j]! += ai * b[j]!
  }
  let carry = 0
  for (let i = 0; i < LIMBS; i++) {
    const ti = t[i]! + carry
    const q = Math.floor(ti * INV_RADIX)
    const low = ti - q * RADIX
    // m = -ti mod 2^23 makes column i vanish: ti + m = (q + 1)·2^23 (or q·2^23 when low = 0).
    if (low === 0) {
      carry = q
    } else {
      const m = RADIX - low
      carry = q + 1
      t[i + 8]! += m * P8
      t[i + 10]! += m * P10
    }
  }
  for (let k = 0; k < LIMBS; k++) {
    const v = t[LIMBS + k]! + carry
    carry = Math.floor(v * INV_RADIX)
    out[k] = v - carry * RADIX
  }
  // The result is below 2P < 2^253: no carry is left.
  reduceOnce(out)
}

function atLeastP(out: Fe): boolean {
  // P = [1, 0 x7, P8, 0, P10], compared from the top limb down.
  if (out[10]! !== P10) return out[10]! > P10
  if (out[9]! !== 0) return true
  if (out[8]! !== P8) return out[8]! > P8
  for (let k = 7; k >= 1; k--) if (out[k]! !== 0) return true
  return out[0]! >= 1
}

/** out -= P when out >= P (out < 2P, limbs normalised). */
function reduceOnce(out: Fe): void {
  if (!atLeastP(out)) return
  let borrow = 0
  for (let k = 0; k < LIMBS; k++) {
    const pk = k === 0 ? 1 : k === 8 ? P8 : k === 10 ? P10 : 0
    let v = out[k]! - pk - borrow
    if (v < 0) {
      v += RADIX
      borrow = 1
    } else borrow = 0
    out[k] = v
  }
}

export function add(out: Fe, a: Fe, b: Fe): void {
  let carry = 0
  for (let k = 0; k < LIMBS; k++) {
    let v = a[k]! + b[k]! + carry
    if (v >= RADIX) {
      v -= RADIX
      carry = 1
    } else carry = 0
    out[k] = v
  }
  reduceOnce(out)
}

export function sub(out: Fe, a: Fe, b: Fe): void {
  let borrow = 0
  for (let k = 0; k < LIMBS; k++) {
    let v = a[k]! - b[k]! - borrow
    if (v < 0) {
      v += RADIX
      borrow = 1
    } else borrow = 0
    out[k] = v
  }
  if (borrow) {
    // Went below zero: add P back (the carry out of the top limb cancels the borrow).
    let carry = 0
    for (let k = 0; k < LIMBS; k++) {
      const pk = k === 0 ? 1 : k === 8 ? P8 : k === 10 ? P10 : 0
      let v = out[k]! + pk + carry
      if (v >= RADIX) {
        v -= RADIX
        carry = 1
      } else carry = 0
      out[k] = v
    }
  }
}

export function isZero(a: Fe): boolean {
  for (let k = 0; k < LIMBS; k++) if (a[k]! !== 0) return false
  return true
}

/** @public Part of the field's API beside add/mul/..., not used by the packer yet. */
export function copy(out: Fe, a: Fe): void {
  out.set(a)
}

/** The limbs of a value already in [0, P) (no change of form). */
export function writeRaw(out: Fe, at: number, value: bigint): void {
  let v = value
  for (let k = 0; k < LIMBS; k++) {
    out[at + k] = Number(v & 0x7fffffn)
    v >>= 23n
  }
}

/** The value held in limbs, as they are (no change of form). */
export function readRaw(a: Fe, at = 0): bigint {
  // Two limbs (46 bits) at a time are exact in a double.
  let v = BigInt(a[at + 10]!)
  for (let k = 9; k >= 1; k -= 2) v = (v << 46n) | BigInt(a[at + k]! * RADIX + a[at + k - 1]!)
  return v
}

/** Montgomery form of x (x in [0, P)), written at `out[at..]`. */
export function toMont(out: Fe, at: number, x: bigint): void {
  writeRaw(out, at, (x * R_MOD_P) % P)
}

/** The plain value of a Montgomery-form element. */
export function fromMont(a: Fe, at = 0): bigint {
  return (readRaw(a, at) * INV_R) % P
}

const INV_R = (() => {
  // R⁻¹ mod P by Fermat's little theorem (done once).
  let result = 1n
  let base = R_MOD_P
  let e = P - 2n
  while (e > 0n) {
    if (e & 1n) result = (result * base) % P
    base = (base * base) % P
    e >>= 1n
  }
  return result
})()

export { R_MOD_P, R2_MOD_P, INV_R }

/**
 * `mul`, unrolled with the limbs and columns in locals (about 2-3x faster than the loop, which
 * stays as its readable specification; the tests check one against the other).
 */
export function mulFast(out: Float64Array, a: Float64Array, b: Float64Array): void {
  const a0 = a[0]!; const a1 = a[1]!; const a2 = a[2]!; const a3 = a[3]!; const a4 = a[4]!; const a5 = a[5]!; const a6 = a[6]!; const a7 = a[7]!; const a8 = a[8]!; const a9 = a[9]!; const a10 = a[10]!
  const b0 = b[0]!; const b1 = b[1]!; const b2 = b[2]!; const b3 = b[3]!; const b4 = b[4]!; const b5 = b[5]!; const b6 = b[6]!; const b7 = b[7]!; const b8 = b[8]!; const b9 = b[9]!; const b10 = b[10]!
  let t0 = a0 * b0
  let t1 = a0 * b1 + a1 * b0
  let t2 = a0 * b2 + a1 * b1 + a2 * b0
  let t3 = a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0
  let t4 = a0 * b4 + a1 * b3 + a2 * b2 + a3 * b1 + a4 * b0
  let t5 = a0 * b5 + a1 * b4 + a2 * b3 + a3 * b2 + a4 * b1 + a5 * b0
  let t6 = a0 * b6 + a1 * b5 + a2 * b4 + a3 * b3 + a4 * b2 + a5 * b1 + a6 * b0
  let t7 = a0 * b7 + a1 * b6 + a2 * b5 + a3 * b4 + a4 * b3 + a5 * b2 + a6 * b1 + a7 * b0
  let t8 = a0 * b8 + a1 * b7 + a2 * b6 + a3 * b5 + a4 * b4 + a5 * b3 + a6 * b2 + a7 * b1 + a8 * b0
  let t9 = a0 * b9 + a1 * b8 + a2 * b7 + a3 * b6 + a4 * b5 + a5 * b4 + a6 * b3 + a7 * b2 + a8 * b1 + a9 * b0
  let t10 = a0 * b10 + a1 * b9 + a2 * b8 + a3 * b7 + a4 * b6 + a5 * b5 + a6 * b4 + a7 * b3 + a8 * b2 + a9 * b1 + a10 * b0
  let t11 = a1 * b10 + a2 * b9 + a3 * b8 + a4 * b7 + a5 * b6 + a6 * b5 + a7 * b4 + a8 * b3 + a9 * b2 + a10 * b1
  let t12 = a2 * b10 + a3 * b9 + a4 * b8 + a5 * b7 + a6 * b6 + a7 * b5 + a8 * b4 + a9 * b3 + a10 * b2
  let t13 = a3 * b10 + a4 * b9 + a5 * b8 + a6 * b7 + a7 * b6 + a8 * b5 + a9 * b4 + a10 * b3
  let t14 = a4 * b10 + a5 * b9 + a6 * b8 + a7 * b7 + a8 * b6 + a9 * b5 + a10 * b4
  let t15 = a5 * b10 + a6 * b9 + a7 * b8 + a8 * b7 + a9 * b6 + a10 * b5
  let t16 = a6 * b10 + a7 * b9 + a8 * b8 + a9 * b7 + a10 * b6
  let t17 = a7 * b10 + a8 * b9 + a9 * b8 + a10 * b7
  let t18 = a8 * b10 + a9 * b9 + a10 * b8
  let t19 = a9 * b10 + a10 * b9
  let t20 = a10 * b10
  let t21 = 0
  let q = 0, low = 0, m = 0, c = 0
  t0 += c; q = Math.floor(t0 * INV_RADIX); low = t0 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t8 += m * P8; t10 += m * P10 }
  t1 += c; q = Math.floor(t1 * INV_RADIX); low = t1 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t9 += m * P8; t11 += m * P10 }
  t2 += c; q = Math.floor(t2 * INV_RADIX); low = t2 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t10 += m * P8; t12 += m * P10 }
  t3 += c; q = Math.floor(t3 * INV_RADIX); low = t3 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t11 += m * P8; t13 += m * P10 }
  t4 += c; q = Math.floor(t4 * INV_RADIX); low = t4 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t12 += m * P8; t14 += m * P10 }
  t5 += c; q = Math.floor(t5 * INV_RADIX); low = t5 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t13 += m * P8; t15 += m * P10 }
  t6 += c; q = Math.floor(t6 * INV_RADIX); low = t6 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t14 += m * P8; t16 += m * P10 }
  t7 += c; q = Math.floor(t7 * INV_RADIX); low = t7 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t15 += m * P8; t17 += m * P10 }
  t8 += c; q = Math.floor(t8 * INV_RADIX); low = t8 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t16 += m * P8; t18 += m * P10 }
  t9 += c; q = Math.floor(t9 * INV_RADIX); low = t9 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t17 += m * P8; t19 += m * P10 }
  t10 += c; q = Math.floor(t10 * INV_RADIX); low = t10 - q * RADIX
  if (low === 0) c = q
  else { m = RADIX - low; c = q + 1; t18 += m * P8; t20 += m * P10 }
  t11 += c; c = Math.floor(t11 * INV_RADIX); out[0] = t11 - c * RADIX
  t12 += c; c = Math.floor(t12 * INV_RADIX); out[1] = t12 - c * RADIX
  t13 += c; c = Math.floor(t13 * INV_RADIX); out[2] = t13 - c * RADIX
  t14 += c; c = Math.floor(t14 * INV_RADIX); out[3] = t14 - c * RADIX
  t15 += c; c = Math.floor(t15 * INV_RADIX); out[4] = t15 - c * RADIX
  t16 += c; c = Math.floor(t16 * INV_RADIX); out[5] = t16 - c * RADIX
  t17 += c; c = Math.floor(t17 * INV_RADIX); out[6] = t17 - c * RADIX
  t18 += c; c = Math.floor(t18 * INV_RADIX); out[7] = t18 - c * RADIX
  t19 += c; c = Math.floor(t19 * INV_RADIX); out[8] = t19 - c * RADIX
  t20 += c; c = Math.floor(t20 * INV_RADIX); out[9] = t20 - c * RADIX
  t21 += c; c = Math.floor(t21 * INV_RADIX); out[10] = t21 - c * RADIX
  reduceOnce(out)
}
/** out = a - b mod P, unrolled (see `sub`). */
export function subFast(out: Float64Array, a: Float64Array, b: Float64Array): void {
  let v = 0, c = 0
  v = a[0]! - b[0]! - c; c = v < 0 ? 1 : 0; out[0] = v + c * RADIX
  v = a[1]! - b[1]! - c; c = v < 0 ? 1 : 0; out[1] = v + c * RADIX
  v = a[2]! - b[2]! - c; c = v < 0 ? 1 : 0; out[2] = v + c * RADIX
  v = a[3]! - b[3]! - c; c = v < 0 ? 1 : 0; out[3] = v + c * RADIX
  v = a[4]! - b[4]! - c; c = v < 0 ? 1 : 0; out[4] = v + c * RADIX
  v = a[5]! - b[5]! - c; c = v < 0 ? 1 : 0; out[5] = v + c * RADIX
  v = a[6]! - b[6]! - c; c = v < 0 ? 1 : 0; out[6] = v + c * RADIX
  v = a[7]! - b[7]! - c; c = v < 0 ? 1 : 0; out[7] = v + c * RADIX
  v = a[8]! - b[8]! - c; c = v < 0 ? 1 : 0; out[8] = v + c * RADIX
  v = a[9]! - b[9]! - c; c = v < 0 ? 1 : 0; out[9] = v + c * RADIX
  v = a[10]! - b[10]! - c; c = v < 0 ? 1 : 0; out[10] = v + c * RADIX
  if (c === 0) return
  c = 0
  v = out[0]! + 1 + c; c = v >= RADIX ? 1 : 0; out[0] = v - c * RADIX
  v = out[1]! + c; c = v >= RADIX ? 1 : 0; out[1] = v - c * RADIX
  v = out[2]! + c; c = v >= RADIX ? 1 : 0; out[2] = v - c * RADIX
  v = out[3]! + c; c = v >= RADIX ? 1 : 0; out[3] = v - c * RADIX
  v = out[4]! + c; c = v >= RADIX ? 1 : 0; out[4] = v - c * RADIX
  v = out[5]! + c; c = v >= RADIX ? 1 : 0; out[5] = v - c * RADIX
  v = out[6]! + c; c = v >= RADIX ? 1 : 0; out[6] = v - c * RADIX
  v = out[7]! + c; c = v >= RADIX ? 1 : 0; out[7] = v - c * RADIX
  v = out[8]! + P8 + c; c = v >= RADIX ? 1 : 0; out[8] = v - c * RADIX
  v = out[9]! + c; c = v >= RADIX ? 1 : 0; out[9] = v - c * RADIX
  v = out[10]! + P10 + c; c = v >= RADIX ? 1 : 0; out[10] = v - c * RADIX
}

/** out = a + b mod P, unrolled (see `add`). */
export function addFast(out: Float64Array, a: Float64Array, b: Float64Array): void {
  let v = 0, c = 0
  v = a[0]! + b[0]! + c; c = v >= RADIX ? 1 : 0; out[0] = v - c * RADIX
  v = a[1]! + b[1]! + c; c = v >= RADIX ? 1 : 0; out[1] = v - c * RADIX
  v = a[2]! + b[2]! + c; c = v >= RADIX ? 1 : 0; out[2] = v - c * RADIX
  v = a[3]! + b[3]! + c; c = v >= RADIX ? 1 : 0; out[3] = v - c * RADIX
  v = a[4]! + b[4]! + c; c = v >= RADIX ? 1 : 0; out[4] = v - c * RADIX
  v = a[5]! + b[5]! + c; c = v >= RADIX ? 1 : 0; out[5] = v - c * RADIX
  v = a[6]! + b[6]! + c; c = v >= RADIX ? 1 : 0; out[6] = v - c * RADIX
  v = a[7]! + b[7]! + c; c = v >= RADIX ? 1 : 0; out[7] = v - c * RADIX
  v = a[8]! + b[8]! + c; c = v >= RADIX ? 1 : 0; out[8] = v - c * RADIX
  v = a[9]! + b[9]! + c; c = v >= RADIX ? 1 : 0; out[9] = v - c * RADIX
  v = a[10]! + b[10]! + c; c = v >= RADIX ? 1 : 0; out[10] = v - c * RADIX
  reduceOnce(out)
}
