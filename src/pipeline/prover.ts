/**
 * The provers a record may name (`sharpProver`), and the fact a verification on L2 with each
 * registers: Stone's in Integrity's FactRegistry,
 * Stwo's the SHARP fact bridged through Satellite. The documentation names `stone` and `stwo`;
 * production accepts `stwoHerodotus` as well. The gate reads a record's prover here, and only
 * as one of these names: a name it does not know cannot say which fact binds the output.
 */
import type { FactField } from '../pie/index.ts'

/** Each known prover as the documents spell it, with the fact its L2 verification registers. */
const PROVERS: readonly { name: string; l2Fact: FactField }[] = [
  { name: 'stone', l2Fact: 'integrityFactHash' },
  { name: 'stwo', l2Fact: 'sharpFactHash' },
  { name: 'stwoHerodotus', l2Fact: 'sharpFactHash' },
]

/** The known names, for a message: `stone, stwo, stwoHerodotus`. */
export const KNOWN_PROVER_NAMES = PROVERS.map((prover) => prover.name).join(', ')

/**
 * A record's prover as the gate reads it: absent (null or left out; records L and D carry
 * none), a known prover, or a name this version does not know (a value that is not text
 * included).
 */
export type ProverReading =
  | { kind: 'absent' }
  | { kind: 'known'; name: string; l2Fact: FactField }
  | { kind: 'unknown'; value: unknown }

/** ASCII letters to lower case, nothing else: no trimming, no Unicode case folding or normalization. */
const foldCase = (text: string) => text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase())

/**
 * Reads `sharpProver`: a known name in any letter case (`Stone`, `STWO`) is that prover; any
 * other text is unknown, however close it looks (`stоne` with a Cyrillic о, `stone ` with a
 * blank, `stwo_v2`): a lookalike must not pass for a prover whose fact the gate then asks for.
 */
export function readProver(sharpProver: unknown): ProverReading {
  if (sharpProver === null || sharpProver === undefined) return { kind: 'absent' }
  if (typeof sharpProver !== 'string') return { kind: 'unknown', value: sharpProver }
  const folded = foldCase(sharpProver)
  const known = PROVERS.find((prover) => foldCase(prover.name) === folded)
  return known ? { kind: 'known', name: known.name, l2Fact: known.l2Fact } : { kind: 'unknown', value: sharpProver }
}
