/**
 * One program-hash measurement in its own process (figure 7):
 *   node bench/hash.ts <pedersen|poseidon|blake|scure-pedersen|scure-poseidon> <words>
 * Hashes a synthetic program of that many words (src/pie/generate/generate.ts's, as `gen:pie
 * --program-words` writes) and prints {"ms": ...}: the hash alone, tables built on first use
 * included, program generation excluded. `scure-pedersen` and `scure-poseidon` are the peers:
 * the chain through @scure/starknet's pedersen, one call per word, and its poseidonHashMany.
 */
import { pedersen, poseidonHashMany } from '@scure/starknet'
import {
  computeProgramHash,
  PROGRAM_HASH_VARIANTS,
  programHashChain,
  type ProgramHashVariant,
} from '../src/pie/index.ts'
import { syntheticProgram } from '../src/pie/generate/generate.ts'

const [variant = '', wordsText] = process.argv.slice(2)
const words = Number(wordsText)
const VARIANTS: readonly string[] = [...PROGRAM_HASH_VARIANTS, 'scure-pedersen', 'scure-poseidon']
if (!VARIANTS.includes(variant) || !Number.isSafeInteger(words) || words < 1) {
  process.stderr.write(
    `usage: node bench/hash.ts <${VARIANTS.join('|')}> <words> (got ${JSON.stringify(variant)} ${JSON.stringify(wordsText)})\n`,
  )
  process.exit(2)
}
const program = { data: syntheticProgram(words, 1), builtins: ['output'], main: 6 }
const started = performance.now()
let hash: bigint
if (variant === 'scure-pedersen') {
  const chain = programHashChain(program)
  const values = [BigInt(chain.length), ...chain]
  hash = values[values.length - 1]!
  for (let i = values.length - 2; i >= 0; i--) hash = BigInt(pedersen(values[i]!, hash))
} else if (variant === 'scure-poseidon') {
  hash = poseidonHashMany(programHashChain(program))
} else {
  hash = computeProgramHash(program, variant as ProgramHashVariant)
}
const ms = performance.now() - started
process.stdout.write(`${JSON.stringify({ variant, words, ms, hash: `0x${hash.toString(16)}` })}\n`)
