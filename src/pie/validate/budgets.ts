import { InvalidInputError } from '../../core/errors.ts'
import { withReason, type PieRefusal } from './reasons.ts'
import { ADDITIONAL_DATA, EXECUTION_RESOURCES, METADATA, type PieEntryName, VERSION } from '../shared/index.ts'

/**
 * What reading one PIE may cost, whatever the PIE says. A hostile pie.zip is small and cheap to
 * send (a 118 KB zip whose metadata.json inflates to 120M empty objects; a 1 MB memory.bin that
 * scatters one cell per bitmap page over 16 segments of 2^30 cells): every parser of this folder
 * works inside these budgets, and refuses the PIE with one line (exit 2, a 400 from the emulator)
 * the moment one is spent, instead of being killed by V8's heap limit or the OOM killer.
 *
 * Sized from real PIEs (docs/reliability.md, "Hostile input"): a CairoPie's metadata.json holds a
 * *stripped* program (data, builtins, main, prime) and its segment table, so it grows with the
 * bytecode only: the fixtures of cairo-lang and cairo-vm hold 0.9-1.3 KB, and 32 MiB holds ~450K
 * program words even as 0x-prefixed 252-bit hex (the StarkNet OS has ~150K). additional_data.json grows with builtin use (a
 * pedersen pair is ~160 bytes): 32 MiB is ~200K hash invocations. The generator's output
 * (src/pie/generate/generate.ts) at any memory.bin size keeps both JSON entries under 4 KB. JSON values
 * are counted: 2M per file (a real file holds one per ~50-80 bytes, so 32 MiB is < 700K), arrays
 * and objects 600K (a pedersen pair is one array; an ecdsa entry two), and objects (Maps, the costliest node) 100K per
 * file (real files hold under 100). Checked by a `proving validate` whose heap is capped at
 * 256 MiB (test/e2e/hostile-pie.test.ts).
 */
const MIB = 1024 * 1024

/** Largest inflated size of each JSON entry read whole (memory.bin is streamed, never held). */
export const JSON_ENTRY_BYTES: Readonly<Record<Exclude<PieEntryName, 'memory.bin'>, number>> = {
  [METADATA]: 32 * MIB,
  [ADDITIONAL_DATA]: 32 * MIB,
  [EXECUTION_RESOURCES]: 1 * MIB,
  [VERSION]: 64 * 1024,
}

export type JsonBudget = {
  /** JSON values (scalars, arrays, objects) in one document. */
  maxNodes: number
  /** Arrays and objects in one document (the costly nodes). */
  maxContainers: number
  /** Objects in one document (each becomes a Map, the costliest). */
  maxObjects: number
}

export const PIE_JSON_BUDGET: JsonBudget = { maxNodes: 2_000_000, maxContainers: 600_000, maxObjects: 100_000 }

/**
 * The duplicate-address check's memory: bitmap pages (4 KiB each) are allocated while their
 * total stays within 8 MiB + half a byte per cell read so far (a dense trace costs 1/8 byte a
 * cell); cells beyond that go to an exact set of at most SPARSE_CELLS entries. So the check
 * costs what the PIE holds, not what its addresses span.
 */
export const SEEN_CELLS_BASE_BYTES = 8 * MIB
export const SEEN_CELLS_BYTES_PER_CELL = 0.5
export const SPARSE_CELLS = 65_536
/** Addresses written twice whose values are compared (no writer emits any). */
export const REWRITTEN_CELLS = 100_000
/** Output cells kept for the fact (real outputs: tens to a few thousand cells). */
export const OUTPUT_CELLS = 4_000_000

/** A PIE that would cost more to read than any real PIE does; one line, exit 2. */
export class PieBudgetError extends InvalidInputError {
  override name = 'PieBudgetError'
  /** The problems found before the budget was spent (validatePie lists them before this one). */
  earlier: PieRefusal[] = []
}

export function budgetError(where: string | undefined, what: string): PieBudgetError {
  return new PieBudgetError(
    withReason(
      `${where ?? 'The PIE'}: ${what}; no real PIE does, so it was refused (a damaged or hostile file).`,
      'budget',
    ),
    { input: where },
  )
}

/** Throws when an entry declares (or a directory file has) more bytes than its budget. */
export function checkJsonEntrySize(
  where: string | undefined,
  name: Exclude<PieEntryName, 'memory.bin'>,
  size: number,
): void {
  const limit = JSON_ENTRY_BYTES[name]
  if (size > limit)
    throw budgetError(where, `${name} inflates to ${size} bytes, past its budget of ${formatSize(limit)}`)
}

export function formatSize(bytes: number): string {
  return bytes >= MIB ? `${bytes / MIB} MiB` : bytes >= 1024 ? `${bytes / 1024} KiB` : `${bytes} bytes`
}
