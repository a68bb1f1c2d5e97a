/**
 * Starknet's Pedersen hash chain in WebAssembly (AssemblyScript, compiled by
 * scripts/build-wasm.ts into src/pie/hash/pedersen-wasm.ts). The program hash is a chain of one
 * Pedersen hash per program word, each step needing the previous one's x coordinate: this is
 * the hot loop of computing facts, run here on 64-bit integers instead of JavaScript's BigInt
 * or doubles.
 *
 * pedersen(a, b) = x(P0 + low(a)·P1 + high(a)·P2 + low(b)·P3 + high(b)·P4), low = bits 0-247,
 * high = bits 248-251. Each term is a multiple of a fixed point, so window tables
 * (d·2^(w·j)·P for every w-bit digit d of window j) make each one a point addition per window.
 *
 * Field elements modulo P = 2^251 + 17·2^192 + 1 are 9 limbs of 29 bits, each in a u32 of
 * linear memory (36 bytes), in Montgomery form (x·2^261 mod P) and fully reduced. A product's
 * 18 columns of at most 9 products of 58 bits stay below 2^62, so they add up in u64 without
 * carries, and the reduction is cheap because P ≡ 1 mod 2^29 and P has three non-zero limbs.
 * Points are Jacobian (X, Y, Z, infinity flag: 112 bytes) while summed, affine (x, y: 72
 * bytes) in tables and once normalised.
 *
 * The JavaScript side (src/pie/hash/pedersen.ts) owns the memory plan: it allocates with `alloc`,
 * writes the constants and the points in plain form, and drives the batches; nothing here
 * knows a BigInt. Checked against @scure/starknet and the published vectors by
 * test/unit/pie/hash/pedersen.test.ts.
 */

const MASK: u64 = 0x1fffffff // 2^29 - 1
const P6: u64 = 17 << 18 // 17·2^192 = limb 6, bit 18
const P8: u64 = 1 << 19 // 2^251 = limb 8, bit 19
const FE: usize = 36 // bytes of a field element
const AFFINE: usize = 72 // x, y
const JACOBIAN: usize = 112 // X, Y, Z, infinity (u32)

/** Bump allocation (the stub runtime never frees): the JS side allocates once and reuses. */
export function alloc(bytes: usize): usize {
  return heap.alloc(bytes)
}

// Constants the JS side writes (plain values; `init` converts what must be Montgomery).
// R2 (R² mod P), ONE_PLAIN (1), ONE (R mod P, i.e. 1 in Montgomery form), R3 (R³ mod P).
let R2: usize = 0
let ONE_PLAIN: usize = 0
let ONE: usize = 0
let R3: usize = 0
let scratch: usize = 0

/** The constants region: R² mod P at +0, 1 at +36, R mod P at +72, R³ mod P at +108 (written by the JS side). */
export function constants(): usize {
  if (R2 == 0) {
    R2 = heap.alloc(4 * FE)
    ONE_PLAIN = R2 + FE
    ONE = R2 + 2 * FE
    R3 = R2 + 3 * FE
    scratch = heap.alloc(40 * FE)
  }
  return R2
}

// Scratch field elements (fixed addresses in `scratch`).
@inline function s(i: usize): usize {
  return scratch + i * FE
}

/** out = a - P if that is not negative (a < 2P, limbs of 29 bits), else a. */
@inline function subtractPOnce(out: usize, o0: u64, o1: u64, o2: u64, o3: u64, o4: u64, o5: u64, o6: u64, o7: u64, o8: u64): void {
  let b: i64 = 0
  const d0 = <i64>o0 - 1; b = d0 >> 63
  const d1 = <i64>o1 + b; b = d1 >> 63
  const d2 = <i64>o2 + b; b = d2 >> 63
  const d3 = <i64>o3 + b; b = d3 >> 63
  const d4 = <i64>o4 + b; b = d4 >> 63
  const d5 = <i64>o5 + b; b = d5 >> 63
  const d6 = <i64>o6 - <i64>P6 + b; b = d6 >> 63
  const d7 = <i64>o7 + b; b = d7 >> 63
  const d8 = <i64>o8 - <i64>P8 + b; b = d8 >> 63
  const keep = b != 0 // a < P: keep a
  store<u32>(out, <u32>select<u64>(o0, <u64>d0 & MASK, keep), 0)
  store<u32>(out, <u32>select<u64>(o1, <u64>d1 & MASK, keep), 4)
  store<u32>(out, <u32>select<u64>(o2, <u64>d2 & MASK, keep), 8)
  store<u32>(out, <u32>select<u64>(o3, <u64>d3 & MASK, keep), 12)
  store<u32>(out, <u32>select<u64>(o4, <u64>d4 & MASK, keep), 16)
  store<u32>(out, <u32>select<u64>(o5, <u64>d5 & MASK, keep), 20)
  store<u32>(out, <u32>select<u64>(o6, <u64>d6 & MASK, keep), 24)
  store<u32>(out, <u32>select<u64>(o7, <u64>d7 & MASK, keep), 28)
  store<u32>(out, <u32>select<u64>(o8, <u64>d8 & MASK, keep), 32)
}

/** out = a·b·R⁻¹ mod P (Montgomery product, R = 2^261); out may alias a or b. */
export function mul(out: usize, a: usize, b: usize): void {
  const a0 = <u64>load<u32>(a, 0)
  const a1 = <u64>load<u32>(a, 4)
  const a2 = <u64>load<u32>(a, 8)
  const a3 = <u64>load<u32>(a, 12)
  const a4 = <u64>load<u32>(a, 16)
  const a5 = <u64>load<u32>(a, 20)
  const a6 = <u64>load<u32>(a, 24)
  const a7 = <u64>load<u32>(a, 28)
  const a8 = <u64>load<u32>(a, 32)
  const b0 = <u64>load<u32>(b, 0)
  const b1 = <u64>load<u32>(b, 4)
  const b2 = <u64>load<u32>(b, 8)
  const b3 = <u64>load<u32>(b, 12)
  const b4 = <u64>load<u32>(b, 16)
  const b5 = <u64>load<u32>(b, 20)
  const b6 = <u64>load<u32>(b, 24)
  const b7 = <u64>load<u32>(b, 28)
  const b8 = <u64>load<u32>(b, 32)
  let t0: u64 = a0 * b0
  let t1: u64 = a0 * b1 + a1 * b0
  let t2: u64 = a0 * b2 + a1 * b1 + a2 * b0
  let t3: u64 = a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0
  let t4: u64 = a0 * b4 + a1 * b3 + a2 * b2 + a3 * b1 + a4 * b0
  let t5: u64 = a0 * b5 + a1 * b4 + a2 * b3 + a3 * b2 + a4 * b1 + a5 * b0
  let t6: u64 = a0 * b6 + a1 * b5 + a2 * b4 + a3 * b3 + a4 * b2 + a5 * b1 + a6 * b0
  let t7: u64 = a0 * b7 + a1 * b6 + a2 * b5 + a3 * b4 + a4 * b3 + a5 * b2 + a6 * b1 + a7 * b0
  let t8: u64 = a0 * b8 + a1 * b7 + a2 * b6 + a3 * b5 + a4 * b4 + a5 * b3 + a6 * b2 + a7 * b1 + a8 * b0
  let t9: u64 = a1 * b8 + a2 * b7 + a3 * b6 + a4 * b5 + a5 * b4 + a6 * b3 + a7 * b2 + a8 * b1
  let t10: u64 = a2 * b8 + a3 * b7 + a4 * b6 + a5 * b5 + a6 * b4 + a7 * b3 + a8 * b2
  let t11: u64 = a3 * b8 + a4 * b7 + a5 * b6 + a6 * b5 + a7 * b4 + a8 * b3
  let t12: u64 = a4 * b8 + a5 * b7 + a6 * b6 + a7 * b5 + a8 * b4
  let t13: u64 = a5 * b8 + a6 * b7 + a7 * b6 + a8 * b5
  let t14: u64 = a6 * b8 + a7 * b7 + a8 * b6
  let t15: u64 = a7 * b8 + a8 * b7
  let t16: u64 = a8 * b8
  let t17: u64 = 0
  reduce(out, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17)
}

/** out = a²·R⁻¹ mod P: the cross products once, doubled (45 products instead of 81). */
export function sqr(out: usize, a: usize): void {
  const a0 = <u64>load<u32>(a, 0)
  const a1 = <u64>load<u32>(a, 4)
  const a2 = <u64>load<u32>(a, 8)
  const a3 = <u64>load<u32>(a, 12)
  const a4 = <u64>load<u32>(a, 16)
  const a5 = <u64>load<u32>(a, 20)
  const a6 = <u64>load<u32>(a, 24)
  const a7 = <u64>load<u32>(a, 28)
  const a8 = <u64>load<u32>(a, 32)
  const d0 = a0 << 1
  const d1 = a1 << 1
  const d2 = a2 << 1
  const d3 = a3 << 1
  const d4 = a4 << 1
  const d5 = a5 << 1
  const d6 = a6 << 1
  const d7 = a7 << 1
  const d8 = a8 << 1
  let t0: u64 = a0 * a0
  let t1: u64 = d0 * a1
  let t2: u64 = d0 * a2 + a1 * a1
  let t3: u64 = d0 * a3 + d1 * a2
  let t4: u64 = d0 * a4 + d1 * a3 + a2 * a2
  let t5: u64 = d0 * a5 + d1 * a4 + d2 * a3
  let t6: u64 = d0 * a6 + d1 * a5 + d2 * a4 + a3 * a3
  let t7: u64 = d0 * a7 + d1 * a6 + d2 * a5 + d3 * a4
  let t8: u64 = d0 * a8 + d1 * a7 + d2 * a6 + d3 * a5 + a4 * a4
  let t9: u64 = d1 * a8 + d2 * a7 + d3 * a6 + d4 * a5
  let t10: u64 = d2 * a8 + d3 * a7 + d4 * a6 + a5 * a5
  let t11: u64 = d3 * a8 + d4 * a7 + d5 * a6
  let t12: u64 = d4 * a8 + d5 * a7 + a6 * a6
  let t13: u64 = d5 * a8 + d6 * a7
  let t14: u64 = d6 * a8 + a7 * a7
  let t15: u64 = d7 * a8
  let t16: u64 = a8 * a8
  let t17: u64 = 0
  reduce(out, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17)
}

/**
 * Montgomery reduction of the 18 columns of a product: for each of the low 9 columns, add m·P
 * with m = -column mod 2^29 (P ≡ 1 mod 2^29, so -P⁻¹ ≡ -1), which clears it; P's other
 * non-zero limbs put m·17·2^18 six columns up and m·2^19 eight columns up. The high 9 columns
 * are then the result, below 2P; one conditional subtraction makes it canonical.
 */
@inline function reduce(out: usize, t0: u64, t1: u64, t2: u64, t3: u64, t4: u64, t5: u64, t6: u64, t7: u64, t8: u64, t9: u64, t10: u64, t11: u64, t12: u64, t13: u64, t14: u64, t15: u64, t16: u64, t17: u64): void {
  let m: u64
  let c: u64 = 0
  m = (0 - t0) & MASK; c = (t0 + m) >> 29; t6 += m * P6; t8 += m * P8
  t1 += c
  m = (0 - t1) & MASK; c = (t1 + m) >> 29; t7 += m * P6; t9 += m * P8
  t2 += c
  m = (0 - t2) & MASK; c = (t2 + m) >> 29; t8 += m * P6; t10 += m * P8
  t3 += c
  m = (0 - t3) & MASK; c = (t3 + m) >> 29; t9 += m * P6; t11 += m * P8
  t4 += c
  m = (0 - t4) & MASK; c = (t4 + m) >> 29; t10 += m * P6; t12 += m * P8
  t5 += c
  m = (0 - t5) & MASK; c = (t5 + m) >> 29; t11 += m * P6; t13 += m * P8
  t6 += c
  m = (0 - t6) & MASK; c = (t6 + m) >> 29; t12 += m * P6; t14 += m * P8
  t7 += c
  m = (0 - t7) & MASK; c = (t7 + m) >> 29; t13 += m * P6; t15 += m * P8
  t8 += c
  m = (0 - t8) & MASK; c = (t8 + m) >> 29; t14 += m * P6; t16 += m * P8
  t9 += c; c = t9 >> 29; t9 &= MASK
  t10 += c; c = t10 >> 29; t10 &= MASK
  t11 += c; c = t11 >> 29; t11 &= MASK
  t12 += c; c = t12 >> 29; t12 &= MASK
  t13 += c; c = t13 >> 29; t13 &= MASK
  t14 += c; c = t14 >> 29; t14 &= MASK
  t15 += c; c = t15 >> 29; t15 &= MASK
  t16 += c; c = t16 >> 29; t16 &= MASK
  t17 += c; c = t17 >> 29; t17 &= MASK
  subtractPOnce(out, t9, t10, t11, t12, t13, t14, t15, t16, t17)
}

/** out = a + b mod P. */
@inline export function add(out: usize, a: usize, b: usize): void {
  let c: u64 = 0
  let v: u64
  v = <u64>load<u32>(a, 0) + <u64>load<u32>(b, 0); const o0 = v & MASK; c = v >> 29
  v = <u64>load<u32>(a, 4) + <u64>load<u32>(b, 4) + c; const o1 = v & MASK; c = v >> 29
  v = <u64>load<u32>(a, 8) + <u64>load<u32>(b, 8) + c; const o2 = v & MASK; c = v >> 29
  v = <u64>load<u32>(a, 12) + <u64>load<u32>(b, 12) + c; const o3 = v & MASK; c = v >> 29
  v = <u64>load<u32>(a, 16) + <u64>load<u32>(b, 16) + c; const o4 = v & MASK; c = v >> 29
  v = <u64>load<u32>(a, 20) + <u64>load<u32>(b, 20) + c; const o5 = v & MASK; c = v >> 29
  v = <u64>load<u32>(a, 24) + <u64>load<u32>(b, 24) + c; const o6 = v & MASK; c = v >> 29
  v = <u64>load<u32>(a, 28) + <u64>load<u32>(b, 28) + c; const o7 = v & MASK; c = v >> 29
  v = <u64>load<u32>(a, 32) + <u64>load<u32>(b, 32) + c
  subtractPOnce(out, o0, o1, o2, o3, o4, o5, o6, o7, v)
}

/** out = a - b mod P. */
@inline export function sub(out: usize, a: usize, b: usize): void {
  let br: i64 = 0
  let v: i64
  v = <i64>load<u32>(a, 0) - <i64>load<u32>(b, 0); const o0 = v; br = v >> 63
  v = <i64>load<u32>(a, 4) - <i64>load<u32>(b, 4) + br; const o1 = v; br = v >> 63
  v = <i64>load<u32>(a, 8) - <i64>load<u32>(b, 8) + br; const o2 = v; br = v >> 63
  v = <i64>load<u32>(a, 12) - <i64>load<u32>(b, 12) + br; const o3 = v; br = v >> 63
  v = <i64>load<u32>(a, 16) - <i64>load<u32>(b, 16) + br; const o4 = v; br = v >> 63
  v = <i64>load<u32>(a, 20) - <i64>load<u32>(b, 20) + br; const o5 = v; br = v >> 63
  v = <i64>load<u32>(a, 24) - <i64>load<u32>(b, 24) + br; const o6 = v; br = v >> 63
  v = <i64>load<u32>(a, 28) - <i64>load<u32>(b, 28) + br; const o7 = v; br = v >> 63
  v = <i64>load<u32>(a, 32) - <i64>load<u32>(b, 32) + br; const o8 = v; br = v >> 63
  // Below zero: add P back (P = 1 + P6·2^174 + P8·2^232); the carry out of the top cancels the borrow.
  const p = <i64>(br & 1)
  let c: i64
  v = (o0 & <i64>MASK) + p; store<u32>(out, <u32>(v & <i64>MASK), 0); c = v >> 29
  v = (o1 & <i64>MASK) + c; store<u32>(out, <u32>(v & <i64>MASK), 4); c = v >> 29
  v = (o2 & <i64>MASK) + c; store<u32>(out, <u32>(v & <i64>MASK), 8); c = v >> 29
  v = (o3 & <i64>MASK) + c; store<u32>(out, <u32>(v & <i64>MASK), 12); c = v >> 29
  v = (o4 & <i64>MASK) + c; store<u32>(out, <u32>(v & <i64>MASK), 16); c = v >> 29
  v = (o5 & <i64>MASK) + c; store<u32>(out, <u32>(v & <i64>MASK), 20); c = v >> 29
  v = (o6 & <i64>MASK) + p * <i64>P6 + c; store<u32>(out, <u32>(v & <i64>MASK), 24); c = v >> 29
  v = (o7 & <i64>MASK) + c; store<u32>(out, <u32>(v & <i64>MASK), 28); c = v >> 29
  v = (o8 & <i64>MASK) + p * <i64>P8 + c; store<u32>(out, <u32>(v & <i64>MASK), 32)
}

@inline function copy(out: usize, a: usize): void {
  memory.copy(out, a, FE)
}

function isZero(a: usize): bool {
  let v: u32 = 0
  for (let k: usize = 0; k < 9; k++) v |= load<u32>(a + 4 * k)
  return v == 0
}

// ---- Inversion: Bernstein and Yang's safegcd, variable time (the inputs are public), in
// libsecp256k1's shape (modinv32: signed 30-bit limbs, 30 divsteps at a time on machine words,
// then the 2x2 transition matrix applied to f, g and to the cofactors d, e modulo P). ----

const M30: i32 = 0x3fffffff
// P in signed 30-bit limbs: 1 + 17·2^(12 + 30·6) + 2^(11 + 30·8); P⁻¹ ≡ 1 mod 2^30.
const P30_6: i32 = 17 << 12
const P30_8: i32 = 1 << 11

// -(2i + 1)⁻¹ mod 256 for i < 128, filled on first use.
let inv256: usize = 0
// Signed 30-bit limbs: d, e, f, g (9 × i32 each).
let d30: usize = 0
let e30: usize = 0
let f30: usize = 0
let g30: usize = 0
// The transition matrix of the last 30 divsteps.
let tu: i32 = 0
let tv: i32 = 0
let tq: i32 = 0
let tr: i32 = 0

function setUpInversion(): void {
  inv256 = heap.alloc(128)
  for (let i: u32 = 0; i < 128; i++) {
    const a: u32 = 2 * i + 1
    let x: u32 = a // a·a ≡ 1 mod 8 for odd a
    x *= 2 - a * x
    x *= 2 - a * x
    store<u8>(inv256 + i, <u8>((0 - x) & 255))
  }
  d30 = heap.alloc(4 * 36)
  e30 = d30 + 36
  f30 = e30 + 36
  g30 = f30 + 36
}

@inline function pLimb30(i: usize): i32 {
  return i == 0 ? 1 : i == 6 ? P30_6 : i == 8 ? P30_8 : 0
}

/** 30 divsteps on the low bits of f and g (odd f); sets the matrix, returns the new eta. */
function divsteps30(eta0: i32, f0: u32, g0: u32): i32 {
  let eta = eta0
  let u: u32 = 1, v: u32 = 0, q: u32 = 0, r: u32 = 1
  let f = f0, g = g0
  let i: i32 = 30
  while (true) {
    // A sentinel bit counts zeros only up to i; that many divsteps just halve g.
    const zeros = <i32>ctz<u32>(g | (<u32>0xffffffff << <u32>i))
    g >>= <u32>zeros
    u <<= <u32>zeros
    v <<= <u32>zeros
    eta -= zeros
    i -= zeros
    if (i == 0) break
    // f and g odd: if eta < 0, negate it and replace (f, g) with (g, -f).
    if (eta < 0) {
      eta = -eta
      let t = f; f = g; g = 0 - t
      t = u; u = q; q = 0 - t
      t = v; v = r; r = 0 - t
    }
    // Cancel up to min(eta + 1, i, 8) low bits of g with a multiple of f.
    const limit = eta + 1 > i ? i : eta + 1
    const m: u32 = (<u32>0xffffffff >> <u32>(32 - limit)) & 255
    const w: u32 = (g * <u32>load<u8>(inv256 + ((f >> 1) & 127))) & m
    g += f * w
    q += u * w
    r += v * w
  }
  tu = <i32>u
  tv = <i32>v
  tq = <i32>q
  tr = <i32>r
  return eta
}

/** [d, e] = (t·[d, e] + P·[md, me]) / 2^30, keeping both in (-2P, P). */
function updateDE(): void {
  const u = <i64>tu, v = <i64>tv, q = <i64>tq, r = <i64>tr
  const sd = load<i32>(d30, 32) >> 31
  const se = load<i32>(e30, 32) >> 31
  let md: i32 = (tu & sd) + (tv & se)
  let me: i32 = (tq & sd) + (tr & se)
  let di = <i64>load<i32>(d30)
  let ei = <i64>load<i32>(e30)
  let cd: i64 = u * di + v * ei
  let ce: i64 = q * di + r * ei
  // P⁻¹ ≡ 1 mod 2^30: the correction that clears the low 30 bits.
  md -= (<i32>cd + md) & M30
  me -= (<i32>ce + me) & M30
  cd += <i64>md
  ce += <i64>me
  cd >>= 30
  ce >>= 30
  for (let i: usize = 1; i < 9; i++) {
    di = <i64>load<i32>(d30 + 4 * i)
    ei = <i64>load<i32>(e30 + 4 * i)
    const pi = <i64>pLimb30(i)
    cd += u * di + v * ei + pi * <i64>md
    ce += q * di + r * ei + pi * <i64>me
    store<i32>(d30 + 4 * (i - 1), <i32>cd & M30)
    store<i32>(e30 + 4 * (i - 1), <i32>ce & M30)
    cd >>= 30
    ce >>= 30
  }
  store<i32>(d30, <i32>cd, 32)
  store<i32>(e30, <i32>ce, 32)
}

/** [f, g] = t·[f, g] / 2^30 over their first `len` limbs. */
function updateFG(len: usize): void {
  const u = <i64>tu, v = <i64>tv, q = <i64>tq, r = <i64>tr
  let fi = <i64>load<i32>(f30)
  let gi = <i64>load<i32>(g30)
  let cf: i64 = (u * fi + v * gi) >> 30
  let cg: i64 = (q * fi + r * gi) >> 30
  for (let i: usize = 1; i < len; i++) {
    fi = <i64>load<i32>(f30 + 4 * i)
    gi = <i64>load<i32>(g30 + 4 * i)
    cf += u * fi + v * gi
    cg += q * fi + r * gi
    store<i32>(f30 + 4 * (i - 1), <i32>cf & M30)
    store<i32>(g30 + 4 * (i - 1), <i32>cg & M30)
    cf >>= 30
    cg >>= 30
  }
  store<i32>(f30 + 4 * (len - 1), <i32>cf)
  store<i32>(g30 + 4 * (len - 1), <i32>cg)
}

/** Carries d's limbs into (-2^30, 2^30) below the top one, which keeps the sign. */
function carryD(): void {
  for (let i: usize = 0; i < 8; i++) {
    const x = load<i32>(d30 + 4 * i)
    store<i32>(d30 + 4 * (i + 1), load<i32>(d30 + 4 * (i + 1)) + (x >> 30))
    store<i32>(d30 + 4 * i, x & M30)
  }
}

/** d ∈ (-2P, P), negated when `sign` < 0, brought to [0, P). */
function normalizeD(sign: i32): void {
  const neg = sign >> 31
  let add = load<i32>(d30, 32) >> 31
  for (let i: usize = 0; i < 9; i++) {
    const x = load<i32>(d30 + 4 * i) + (pLimb30(i) & add)
    store<i32>(d30 + 4 * i, (x ^ neg) - neg)
  }
  carryD()
  add = load<i32>(d30, 32) >> 31
  for (let i: usize = 0; i < 9; i++) store<i32>(d30 + 4 * i, load<i32>(d30 + 4 * i) + (pLimb30(i) & add))
  carryD()
}

/**
 * The 9 limbs of `to` bits of a non-negative value held in 9 limbs of `from` bits (29 and 30,
 * either way; little-endian, each limb in a 32-bit word), the value unchanged.
 */
function repack(out: usize, a: usize, from: u32, to: u32): void {
  const mask: u64 = (<u64>1 << to) - 1
  let acc: u64 = 0
  let bits: u32 = 0
  let k: usize = 0
  for (let i: usize = 0; i < 9; i++) {
    acc |= <u64>load<u32>(a + 4 * i) << bits
    bits += from
    while (bits >= to && k < 9) {
      store<u32>(out + 4 * k++, <u32>(acc & mask))
      acc >>= to
      bits -= to
    }
  }
  while (k < 9) {
    store<u32>(out + 4 * k++, <u32>(acc & mask))
    acc >>= to
  }
}

/** out = a⁻¹ (Montgomery form in and out; a ≠ 0): safegcd gives (aR)⁻¹, times R³ in Montgomery gives a⁻¹R. */
export function invert(out: usize, a: usize): void {
  if (inv256 == 0) setUpInversion()
  memory.fill(d30, 0, 36)
  memory.fill(e30, 0, 36)
  store<i32>(e30, 1)
  for (let i: usize = 0; i < 9; i++) store<i32>(f30 + 4 * i, pLimb30(i))
  repack(g30, a, 29, 30)
  let len: usize = 9
  let eta: i32 = -1
  while (true) {
    eta = divsteps30(eta, load<u32>(f30), load<u32>(g30))
    updateDE()
    updateFG(len)
    if (load<i32>(g30) == 0) {
      let any: i32 = 0
      for (let j: usize = 1; j < len; j++) any |= load<i32>(g30 + 4 * j)
      if (any == 0) break
    }
    // When the top limbs of f and g are both 0 or -1, fold them into the limb below.
    const fn = load<i32>(f30 + 4 * (len - 1))
    const gn = load<i32>(g30 + 4 * (len - 1))
    const cond = (<i32>len - 2 >> 31) | (fn ^ (fn >> 31)) | (gn ^ (gn >> 31))
    if (cond == 0) {
      store<i32>(f30 + 4 * (len - 2), load<i32>(f30 + 4 * (len - 2)) | (fn << 30))
      store<i32>(g30 + 4 * (len - 2), load<i32>(g30 + 4 * (len - 2)) | (gn << 30))
      len--
    }
  }
  normalizeD(load<i32>(f30 + 4 * (len - 1)))
  repack(out, d30, 30, 29)
  mul(out, out, R3)
}

/** Montgomery form of a plain element. */
export function toMont(out: usize, a: usize): void {
  mul(out, a, R2)
}

/** The plain value of a Montgomery-form element. */
export function fromMont(out: usize, a: usize): void {
  mul(out, a, ONE_PLAIN)
}

// ---- Points ----

@inline function X(p: usize): usize { return p }
@inline function Y(p: usize): usize { return p + FE }
@inline function Z(p: usize): usize { return p + 2 * FE }
@inline function isInfinity(p: usize): bool { return load<u32>(p, 3 * FE) != 0 }
@inline function setInfinity(p: usize, value: bool): void { store<u32>(p, value ? 1 : 0, 3 * FE) }

/** p = the affine point q (x, y) with Z = 1. */
function setAffine(p: usize, q: usize): void {
  memory.copy(p, q, AFFINE)
  copy(Z(p), ONE)
  setInfinity(p, false)
}

/** p = 2p (dbl-2007-bl for a = 1). */
function double(p: usize): void {
  if (isInfinity(p)) return
  if (isZero(Y(p))) {
    setInfinity(p, true)
    return
  }
  const XX = s(0), YY = s(1), YYYY = s(2), ZZ = s(3), S = s(4), M = s(5), T = s(6)
  sqr(XX, X(p))
  sqr(YY, Y(p))
  sqr(YYYY, YY)
  sqr(ZZ, Z(p))
  // S = 2((X + YY)² - XX - YYYY)
  add(S, X(p), YY)
  sqr(S, S)
  sub(S, S, XX)
  sub(S, S, YYYY)
  add(S, S, S)
  // M = 3XX + ZZ² (a = 1)
  sqr(M, ZZ)
  add(M, M, XX)
  add(M, M, XX)
  add(M, M, XX)
  // Z3 = (Y + Z)² - YY - ZZ (before Y changes)
  add(T, Y(p), Z(p))
  sqr(T, T)
  sub(T, T, YY)
  sub(Z(p), T, ZZ)
  // X3 = M² - 2S
  sqr(T, M)
  sub(T, T, S)
  sub(X(p), T, S)
  // Y3 = M(S - X3) - 8YYYY
  sub(S, S, X(p))
  mul(S, M, S)
  add(YYYY, YYYY, YYYY)
  add(YYYY, YYYY, YYYY)
  add(YYYY, YYYY, YYYY)
  sub(Y(p), S, YYYY)
}

/** p += q with q affine (madd-2007-bl: 7M + 4S), handling infinity, equal and opposite points. */
function addAffine(p: usize, q: usize): void {
  if (isInfinity(p)) {
    setAffine(p, q)
    return
  }
  const Z1Z1 = s(7), U2 = s(8), S2 = s(9), H = s(10), HH = s(11), I = s(12), J = s(13), R = s(14), V = s(15), T = s(16)
  sqr(Z1Z1, Z(p))
  mul(U2, q, Z1Z1)
  mul(S2, q + FE, Z(p))
  mul(S2, S2, Z1Z1)
  sub(H, U2, X(p))
  sub(R, S2, Y(p))
  if (isZero(H)) {
    // The same x: p = q (double it) or p = -q (infinity). Never met in a hash of real data.
    if (isZero(R)) double(p)
    else setInfinity(p, true)
    return
  }
  sqr(HH, H)
  add(I, HH, HH)
  add(I, I, I)
  mul(J, H, I)
  add(R, R, R)
  mul(V, X(p), I)
  // Z3 = (Z1 + H)² - Z1Z1 - HH (Z1 read before X, Y change)
  add(T, Z(p), H)
  sqr(T, T)
  sub(T, T, Z1Z1)
  sub(Z(p), T, HH)
  // W = 2·Y1·J (before Y changes)
  const W = s(19)
  mul(W, Y(p), J)
  add(W, W, W)
  // X3 = r² - J - 2V
  sqr(X(p), R)
  sub(X(p), X(p), J)
  sub(X(p), X(p), V)
  sub(X(p), X(p), V)
  // Y3 = r(V - X3) - 2Y1J
  sub(V, V, X(p))
  mul(V, R, V)
  sub(Y(p), V, W)
}

// ---- Scalars: plain elements (9 limbs of 29 bits), read a window at a time ----

/** `count` bits (at most 29) of a plain element from bit `start`. */
@inline function bits(a: usize, start: u32, count: u32): u32 {
  const limb = start / 29
  const offset = start % 29
  let v = <u64>load<u32>(a + 4 * <usize>limb) >> offset
  if (offset + count > 29 && limb < 8) v |= <u64>load<u32>(a + 4 * <usize>(limb + 1)) << (29 - offset)
  return <u32>(v & ((<u64>1 << count) - 1))
}

/**
 * p += low(k)·B + high(k)·C for a plain scalar k, with `low` the window table of B (windows of
 * `w` bits over bits 0-247) and `high` the 15 multiples of C (bits 248-251).
 */
function addScalar(p: usize, k: usize, low: usize, w: u32, high: usize): void {
  const size: usize = (<usize>1 << w) - 1
  let j: usize = 0
  for (let start: u32 = 0; start < 248; start += w) {
    const count: u32 = <u32>248 - start < w ? <u32>248 - start : w
    const digit = bits(k, start, count)
    if (digit != 0) addAffine(p, low + (j * size + <usize>digit - 1) * AFFINE)
    j++
  }
  const top = bits(k, 248, 4)
  if (top != 0) addAffine(p, high + (<usize>top - 1) * AFFINE)
}

/** The affine x of p, plain (for the next step's scalar): one inversion. Returns false at infinity. */
function plainX(out: usize, p: usize): bool {
  if (isInfinity(p)) return false
  const zInv = s(17), zz = s(18)
  invert(zInv, Z(p))
  sqr(zz, zInv)
  mul(zz, zz, X(p))
  fromMont(out, zz)
  return true
}

/**
 * Affine forms of `count` Jacobian points (stride JACOBIAN, at `points`) into `out` (stride
 * AFFINE), with one inversion (Montgomery's trick); `prefix` holds count elements. A point at
 * infinity is written as x = y = 0 with its flag left in the Jacobian entry for the caller.
 */
function normalize(points: usize, count: usize, out: usize, prefix: usize): void {
  const acc = s(23), inv = s(24), zInv = s(25), zz = s(26)
  copy(acc, ONE)
  for (let i: usize = 0; i < count; i++) {
    const p = points + i * JACOBIAN
    copy(prefix + i * FE, acc)
    if (!isInfinity(p)) mul(acc, acc, Z(p))
  }
  invert(inv, acc)
  for (let i = <isize>count - 1; i >= 0; i--) {
    const p = points + <usize>i * JACOBIAN
    const o = out + <usize>i * AFFINE
    if (isInfinity(p)) {
      memory.fill(o, 0, AFFINE)
      continue
    }
    mul(zInv, inv, prefix + <usize>i * FE)
    mul(inv, inv, Z(p))
    sqr(zz, zInv)
    mul(o, X(p), zz)
    mul(zz, zz, zInv)
    mul(o + FE, Y(p), zz)
  }
}

/**
 * The window table of the affine point `base` (Montgomery form): for each of `windows`
 * windows j of `w` bits, the affine points d·2^(w·j)·base for d = 1 .. 2^w - 1, at `out`.
 * `work` holds 2^w Jacobian points and 2^w elements.
 */
export function buildTable(out: usize, base: usize, w: u32, windows: u32, work: usize): void {
  const size: usize = (<usize>1 << w) - 1
  const points = work
  const prefix = work + (size + 1) * JACOBIAN
  const b = s(27) // this window's base, affine (2 elements: s(27), s(28))
  memory.copy(b, base, AFFINE)
  for (let j: usize = 0; j < <usize>windows; j++) {
    // d·B for d = 1 .. size, then (size + 1)·B = the next window's base.
    setAffine(points, b)
    for (let d: usize = 1; d <= size; d++) {
      const p = points + d * JACOBIAN
      memory.copy(p, points + (d - 1) * JACOBIAN, JACOBIAN)
      if (d == 1) double(p)
      else addAffine(p, b)
    }
    normalize(points, size + 1, out + j * size * AFFINE, prefix)
    // The entry past this window's table is the next window's base: 2^w·B.
    memory.copy(b, out + j * size * AFFINE + size * AFFINE, AFFINE)
  }
}

/** Converts `count` 256-bit little-endian words at `src` (32 bytes each) to plain elements at `dst`. */
export function loadWords(src: usize, count: usize, dst: usize): void {
  for (let i: usize = 0; i < count; i++) {
    const w0 = load<u64>(src + 32 * i, 0)
    const w1 = load<u64>(src + 32 * i, 8)
    const w2 = load<u64>(src + 32 * i, 16)
    const w3 = load<u64>(src + 32 * i, 24)
    const o = dst + FE * i
    store<u32>(o, <u32>(w0 & MASK), 0)
    store<u32>(o, <u32>((w0 >> 29) & MASK), 4)
    store<u32>(o, <u32>(((w0 >> 58) | (w1 << 6)) & MASK), 8)
    store<u32>(o, <u32>((w1 >> 23) & MASK), 12)
    store<u32>(o, <u32>(((w1 >> 52) | (w2 << 12)) & MASK), 16)
    store<u32>(o, <u32>((w2 >> 17) & MASK), 20)
    store<u32>(o, <u32>(((w2 >> 46) | (w3 << 18)) & MASK), 24)
    store<u32>(o, <u32>((w3 >> 11) & MASK), 28)
    store<u32>(o, <u32>((w3 >> 40) & MASK), 32)
  }
}

/**
 * First halves of a batch: for each plain word a at `words` (count of them), shift +
 * low(a)·B1 + high(a)·B2, normalised together into affine points at `out`; an entry whose sum
 * is the point at infinity gets its flag at `flags` (one u32 each). `work` holds count
 * Jacobian points and count elements.
 */
export function firstHalves(words: usize, count: usize, shift: usize, low: usize, w: u32, high: usize, out: usize, flags: usize, work: usize): void {
  const points = work
  const prefix = work + count * JACOBIAN
  for (let i: usize = 0; i < count; i++) {
    const p = points + i * JACOBIAN
    setAffine(p, shift)
    addScalar(p, words + i * FE, low, w, high)
    store<u32>(flags + 4 * i, isInfinity(p) ? 1 : 0)
  }
  normalize(points, count, out, prefix)
}

/**
 * The chain over a batch, last word first: for i = count - 1 down to 0, hash = x(half[i] +
 * low(hash)·B3 + high(hash)·B4), where half[i] is the affine first half of word i (at
 * `halves`, flags at `flags`) and `hash` (a plain element, in and out) starts as the running
 * hash. Returns the number of steps done: count, or less when a sum reached infinity (the
 * caller reports that).
 */
export function chain(halves: usize, flags: usize, count: usize, low: usize, w: u32, high: usize, hash: usize): usize {
  const p = s(29) // Jacobian: 112 bytes = s(29) .. s(32)
  for (let i = <isize>count - 1; i >= 0; i--) {
    if (load<u32>(flags + 4 * <usize>i) != 0) setInfinity(p, true)
    else setAffine(p, halves + <usize>i * AFFINE)
    addScalar(p, hash, low, w, high)
    if (!plainX(hash, p)) return count - 1 - <usize>i
  }
  return count
}

// ---- Poseidon (Starknet's Hades permutation: width 3, 8 full rounds around 83 partial ones,
// x³ S-box, MDS [[3, 1, 1], [1, -1, 1], [1, 1, -2]]) and its sponge, poseidonHashMany ----

/**
 * One lane of the mix, from signed limbs (each column a few times 2^29 at most, the value in
 * [0, 6P)), carried and brought into [0, P): subtract q·P with q the value's bits from 2^251 up
 * (what is left is below 2^251 < P, or negative by less than P), then add P back if negative.
 */
@inline function settleLane(out: usize, l0: i64, l1: i64, l2: i64, l3: i64, l4: i64, l5: i64, l6: i64, l7: i64, l8: i64): void {
  const m = <i64>MASK
  l1 += l0 >> 29; l0 &= m
  l2 += l1 >> 29; l1 &= m
  l3 += l2 >> 29; l2 &= m
  l4 += l3 >> 29; l3 &= m
  l5 += l4 >> 29; l4 &= m
  l6 += l5 >> 29; l5 &= m
  l7 += l6 >> 29; l6 &= m
  l8 += l7 >> 29; l7 &= m
  const q = l8 >> 19
  l0 -= q
  l6 -= q * <i64>P6
  l8 -= q << 19
  l1 += l0 >> 29; l0 &= m
  l2 += l1 >> 29; l1 &= m
  l3 += l2 >> 29; l2 &= m
  l4 += l3 >> 29; l3 &= m
  l5 += l4 >> 29; l4 &= m
  l6 += l5 >> 29; l5 &= m
  l7 += l6 >> 29; l6 &= m
  l8 += l7 >> 29; l7 &= m
  const neg = l8 >> 63 // -1 when negative
  l0 += neg & 1
  l6 += neg & <i64>P6
  l8 += neg & <i64>P8
  l1 += l0 >> 29; l0 &= m
  l2 += l1 >> 29; l1 &= m
  l3 += l2 >> 29; l2 &= m
  l4 += l3 >> 29; l3 &= m
  l5 += l4 >> 29; l4 &= m
  l6 += l5 >> 29; l5 &= m
  l7 += l6 >> 29; l6 &= m
  l8 += l7 >> 29; l7 &= m
  store<u32>(out, <u32>l0, 0)
  store<u32>(out, <u32>l1, 4)
  store<u32>(out, <u32>l2, 8)
  store<u32>(out, <u32>l3, 12)
  store<u32>(out, <u32>l4, 16)
  store<u32>(out, <u32>l5, 20)
  store<u32>(out, <u32>l6, 24)
  store<u32>(out, <u32>l7, 28)
  store<u32>(out, <u32>l8, 32)
}

@inline function lane(state: usize, k: usize): i64 {
  return <i64>load<u32>(state + 4 * k)
}

@inline function pLimb(k: usize): i64 {
  return k == 0 ? 1 : k == 6 ? <i64>P6 : k == 8 ? <i64>P8 : 0
}

/**
 * The MDS mix of a round fused with the next round's constants (`next`, or none when 0):
 * a' = 3a + b + c, b' = a - b + c + P, c' = a + b - 2c + 2P (the P terms keep them
 * non-negative), each plus its constant, on limbs without carries, then settled once.
 */
function mixAndAdd(state: usize, next: usize): void {
  const a = state, b = state + FE, c = state + 2 * FE
  let x0: i64 = 0, x1: i64 = 0, x2: i64 = 0, x3: i64 = 0, x4: i64 = 0, x5: i64 = 0, x6: i64 = 0, x7: i64 = 0, x8: i64 = 0
  let y0: i64 = 0, y1: i64 = 0, y2: i64 = 0, y3: i64 = 0, y4: i64 = 0, y5: i64 = 0, y6: i64 = 0, y7: i64 = 0, y8: i64 = 0
  let z0: i64 = 0, z1: i64 = 0, z2: i64 = 0, z3: i64 = 0, z4: i64 = 0, z5: i64 = 0, z6: i64 = 0, z7: i64 = 0, z8: i64 = 0
  // Column k of each output lane.
  let A: i64, B: i64, C: i64, t: i64
  A = lane(a, 0); B = lane(b, 0); C = lane(c, 0); t = A + B + C; x0 = t + 2 * A; y0 = t - 2 * B + pLimb(0); z0 = t - 3 * C + 2 * pLimb(0)
  A = lane(a, 1); B = lane(b, 1); C = lane(c, 1); t = A + B + C; x1 = t + 2 * A; y1 = t - 2 * B; z1 = t - 3 * C
  A = lane(a, 2); B = lane(b, 2); C = lane(c, 2); t = A + B + C; x2 = t + 2 * A; y2 = t - 2 * B; z2 = t - 3 * C
  A = lane(a, 3); B = lane(b, 3); C = lane(c, 3); t = A + B + C; x3 = t + 2 * A; y3 = t - 2 * B; z3 = t - 3 * C
  A = lane(a, 4); B = lane(b, 4); C = lane(c, 4); t = A + B + C; x4 = t + 2 * A; y4 = t - 2 * B; z4 = t - 3 * C
  A = lane(a, 5); B = lane(b, 5); C = lane(c, 5); t = A + B + C; x5 = t + 2 * A; y5 = t - 2 * B; z5 = t - 3 * C
  A = lane(a, 6); B = lane(b, 6); C = lane(c, 6); t = A + B + C; x6 = t + 2 * A; y6 = t - 2 * B + pLimb(6); z6 = t - 3 * C + 2 * pLimb(6)
  A = lane(a, 7); B = lane(b, 7); C = lane(c, 7); t = A + B + C; x7 = t + 2 * A; y7 = t - 2 * B; z7 = t - 3 * C
  A = lane(a, 8); B = lane(b, 8); C = lane(c, 8); t = A + B + C; x8 = t + 2 * A; y8 = t - 2 * B + pLimb(8); z8 = t - 3 * C + 2 * pLimb(8)
  if (next != 0) {
    const ra = next, rb = next + FE, rc = next + 2 * FE
    x0 += lane(ra, 0); x1 += lane(ra, 1); x2 += lane(ra, 2); x3 += lane(ra, 3); x4 += lane(ra, 4); x5 += lane(ra, 5); x6 += lane(ra, 6); x7 += lane(ra, 7); x8 += lane(ra, 8)
    y0 += lane(rb, 0); y1 += lane(rb, 1); y2 += lane(rb, 2); y3 += lane(rb, 3); y4 += lane(rb, 4); y5 += lane(rb, 5); y6 += lane(rb, 6); y7 += lane(rb, 7); y8 += lane(rb, 8)
    z0 += lane(rc, 0); z1 += lane(rc, 1); z2 += lane(rc, 2); z3 += lane(rc, 3); z4 += lane(rc, 4); z5 += lane(rc, 5); z6 += lane(rc, 6); z7 += lane(rc, 7); z8 += lane(rc, 8)
  }
  settleLane(a, x0, x1, x2, x3, x4, x5, x6, x7, x8)
  settleLane(b, y0, y1, y2, y3, y4, y5, y6, y7, y8)
  settleLane(c, z0, z1, z2, z3, z4, z5, z6, z7, z8)
}

@inline function cube(x: usize): void {
  const t = s(33)
  sqr(t, x)
  mul(x, x, t)
}

/** The Hades permutation of the 3-element state (Montgomery form), with the 91 × 3 constants. */
function hades(state: usize, constants: usize): void {
  const a = state, b = state + FE, c = state + 2 * FE
  // Each round: its constants (added by the previous round's mix, the first here), the S-box on
  // every lane (full rounds) or the last (partial ones), then the mix.
  add(a, a, constants)
  add(b, b, constants + FE)
  add(c, c, constants + 2 * FE)
  for (let r: usize = 0; r < 91; r++) {
    if (r < 4 || r >= 87) {
      cube(a)
      cube(b)
    }
    cube(c)
    mixAndAdd(state, r < 90 ? constants + (r + 1) * 3 * FE : 0)
  }
}

/**
 * Absorbs `count` plain elements (an even number: the caller pads with 1 then 0 as
 * poseidonHashMany does) into the state, two per permutation.
 */
export function poseidonAbsorb(state: usize, words: usize, count: usize, constants: usize): void {
  const t = s(35)
  for (let i: usize = 0; i < count; i += 2) {
    toMont(t, words + i * FE)
    add(state, state, t)
    toMont(t, words + (i + 1) * FE)
    add(state + FE, state + FE, t)
    hades(state, constants)
  }
}
