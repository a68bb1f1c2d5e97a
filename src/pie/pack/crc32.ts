/**
 * Joining CRC-32s of consecutive blocks. The packer checksums each block on the worker that
 * compresses it, so the entry's CRC must be assembled from per-block values; this is zlib's
 * crc32_combine (polynomial arithmetic modulo the CRC polynomial, reflected), which Node does
 * not expose.
 */

const POLY = 0xedb88320

// a(x) * b(x) modulo p(x), both reflected 32-bit polynomials.
function multModP(a: number, b: number): number {
  let m = 0x80000000
  let p = 0
  for (;;) {
    if (a & m) {
      p ^= b
      if ((a & (m - 1)) === 0) break
    }
    m >>>= 1
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1
  }
  return p >>> 0
}

// X2N[k] = x^(2^k) modulo p(x).
const X2N: number[] = (() => {
  const table: number[] = []
  let p = 0x40000000 // x^1
  table.push(p)
  for (let k = 1; k < 32; k++) table.push((p = multModP(p, p)))
  return table
})()

// x^(n * 2^k) modulo p(x); n may exceed 2^32 (it is a byte count).
function x2nModP(n: number, k: number): number {
  let p = 0x80000000 // x^0
  while (n > 0) {
    if (n % 2 === 1) p = multModP(X2N[k & 31]!, p)
    n = Math.floor(n / 2)
    k++
  }
  return p
}

/** CRC-32 of A followed by B, from crc(A), crc(B) and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  if (lengthB === 0) return crcA >>> 0
  return (multModP(x2nModP(lengthB, 3), crcA >>> 0) ^ (crcB >>> 0)) >>> 0
}
