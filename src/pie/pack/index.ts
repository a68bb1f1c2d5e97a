/**
 * Writing the canonical pie.zip of a PIE directory: its files deflated in parallel blocks,
 * written front to back (never patched), hashed as written.
 */
export { canonicalZipDigest, packPie, type PackedEntry, type PackPieOptions, type PackPieResult } from './pack.ts'
export { closeDeflatePools } from './deflate-pool.ts'
